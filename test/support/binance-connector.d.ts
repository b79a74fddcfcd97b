// The slice of @binance/connector (plain JS, no types) that test/integration/binance-clients.test.ts uses.
declare module "@binance/connector" {
  interface Response<T = unknown> {
    readonly status: number
    readonly data: T
  }
  export class Spot {
    constructor(apiKey?: string, apiSecret?: string, options?: { baseURL?: string })
    time(): Promise<Response>
    account(options?: Record<string, unknown>): Promise<Response>
    newOrder(symbol: string, side: string, type: string, options?: Record<string, unknown>): Promise<Response>
  }
}
