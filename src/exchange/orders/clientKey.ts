// A place's idempotency key as the orders table stores it (`orders.client_key`, migration 0046):
// market id, user id and client order id, space-separated. A client order id has no space
// (`^[.A-Z:/a-z0-9_-]{1,36}$`) and the two ids are digits, so two different triples never make
// the same key. Probes by this column use its unique index whatever the table's statistics say.
export const clientKey = (marketId: number, userId: number, clientOrderId: string): string => `${marketId} ${userId} ${clientOrderId}`
