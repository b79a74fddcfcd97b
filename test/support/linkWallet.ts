// The test wallet lives in harness/ (the chaos campaign links and signs in with it too).
export { deskPayload, makeWallet, type SignKind, type TestWallet } from "../../harness/walletApp.ts"
