import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

// Automatic refunds of mint and wrap deposits and cross-node EVM nonce safety (issue 12):
// - desk_order_legs takes more leg names (a refund's gas top-up `refund_gas`, and whatever other
//   kinds add): the fixed list becomes a name check, the names live in src/desk/orders/legs.ts;
// - each EVM leg records its sender, so a node choosing a nonce (under a Postgres advisory lock
//   per chain and sender, src/desk/orders/nonceLock.ts) sees every nonce another node recorded
//   for the same address but maybe has not sent yet.
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // The inline CHECK on `leg` has a generated name: drop whichever check mentions the column.
  yield* sql`DO $$
    DECLARE c record;
    BEGIN
      FOR c IN SELECT conname FROM pg_constraint
        WHERE conrelid = 'desk_order_legs'::regclass AND contype = 'c' AND pg_get_constraintdef(oid) LIKE '%leg%'
      LOOP
        EXECUTE format('ALTER TABLE desk_order_legs DROP CONSTRAINT %I', c.conname);
      END LOOP;
    END $$`
  yield* sql`ALTER TABLE desk_order_legs
    ADD CONSTRAINT desk_order_legs_leg_name CHECK (leg ~ '^[a-z][a-z_]{0,31}$'),
    ADD COLUMN sender TEXT`
  yield* sql`CREATE INDEX desk_order_legs_sender_nonce ON desk_order_legs (chain, lower(sender), nonce DESC) WHERE nonce IS NOT NULL`
})
