// The slice of @binance/connector (plain JS, no types) that test/integration/binance-clients.test.ts uses.
declare module "@binance/connector" {
  interface Response<T = unknown> {
    readonly status: number
    readonly data: T
  }
  type Options = Record<string, unknown>
  export class Spot {
    constructor(apiKey?: string, apiSecret?: string, options?: { baseURL?: string })
    time(): Promise<Response>
    account(options?: Options): Promise<Response>
    newOrder(symbol: string, side: string, type: string, options?: Options): Promise<Response>
    getOrder(symbol: string, options?: Options): Promise<Response>
    cancelOrder(symbol: string, options?: Options): Promise<Response>
    cancelOpenOrders(symbol: string, options?: Options): Promise<Response>
    openOrders(options?: Options): Promise<Response>
    allOrders(symbol: string, options?: Options): Promise<Response>
    myTrades(symbol: string, options?: Options): Promise<Response>
  }
}
