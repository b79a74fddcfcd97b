// The node, its settings and its migrations come from one list of front doors (src/services.ts):
// what each derives is what the three services' own modules give, in the same order and names.
import { Context, Effect, Layer } from "effect"
import { describe, expect, it } from "vitest"
import { configLayer, readNodeConfig } from "../../../src/config.ts"
import * as DeskConfig from "../../../src/desk/DeskConfig.ts"
import { migrations as desk } from "../../../src/desk/migrations/index.ts"
import * as ExchangeConfig from "../../../src/exchange/ExchangeConfig.ts"
import { migrations as exchange } from "../../../src/exchange/migrations/index.ts"
import { migrations } from "../../../src/migrations.ts"
import { AppConfig } from "../../../src/platform/Config.ts"
import { migrations as platform } from "../../../src/platform/database/migrations/index.ts"
import { services } from "../../../src/services.ts"
import * as SocialConfig from "../../../src/social/SocialConfig.ts"
import { migrations as social } from "../../../src/social/migrations/index.ts"
import { unitDataDir } from "../../support/unitConfig.ts"

describe("the list of front doors", () => {
  it("names the three services in the order their devnet worlds are made", () => {
    expect(services.map((s) => s.settings.tag)).toEqual([ExchangeConfig.ExchangeConfig, DeskConfig.DeskConfig, SocialConfig.SocialConfig])
    expect(services.map((s) => "devnetWorld" in s)).toEqual([true, true, false])
  })

  it("derives the migration list: every id of the platform and each service, in id order, none added", () => {
    const keys = [...Object.keys(platform), ...Object.keys(exchange), ...Object.keys(desk), ...Object.keys(social)]
    expect(Object.keys(migrations)).toEqual([...keys].sort((a, b) => parseInt(a) - parseInt(b)))
  })

  it("derives the flat settings record: the platform's fields and each service's, under their own names", () => {
    const config = Effect.runSync(readNodeConfig(unitDataDir))
    for (const defaults of [ExchangeConfig.defaults, DeskConfig.defaults, SocialConfig.defaults]) {
      for (const [field, value] of Object.entries(defaults)) expect(config[field as keyof typeof config], field).toEqual(value)
    }
    const context = Effect.runSync(Effect.scoped(Layer.build(configLayer(config))))
    for (const tag of [AppConfig, ExchangeConfig.ExchangeConfig, DeskConfig.DeskConfig, SocialConfig.SocialConfig]) {
      expect(Context.unsafeGet(context, tag as Context.Tag<unknown, unknown>)).toBe(config)
    }
  })
})
