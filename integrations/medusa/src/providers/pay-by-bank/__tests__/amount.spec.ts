import { BigNumber } from "@medusajs/framework/utils"

import { toAmount } from "../amount"

describe("toAmount", () => {
  it.each([
    [49.9, "49.90"],
    [49, "49.00"],
    [0.1 + 0.2 - 0.3 + 49.9 - (0.1 + 0.2 - 0.3), "49.90"],
    ["49.9", "49.90"],
    ["1249.90", "1249.90"],
    ["0012.5", "12.50"],
    [1e21, "1000000000000000000000.00"],
    ["4.99e1", "49.90"],
    [new BigNumber(49.9), "49.90"],
    [new BigNumber("1249.95"), "1249.95"],
    [{ value: "49.90000000000000000000", precision: 20 }, "49.90"],
    [{ value: 12, precision: 20 }, "12.00"],
  ])("carries %p over as %s", (input, want) => {
    expect(toAmount(input as never)).toBe(want)
  })

  it.each([
    [0.1 + 0.2, "more than 2 decimals"],
    ["49.999", "more than 2 decimals"],
    [new BigNumber("10.005"), "more than 2 decimals"],
    [{ value: "0.30000000000000004441", precision: 20 }, "more than 2 decimals"],
    [-5, "negative"],
    ["", "not a number"],
    ["12,50", "not a number"],
    [Number.NaN, "not a number"],
    [undefined, "missing"],
  ])("refuses %p: %s", (input, why) => {
    expect(() => toAmount(input as never)).toThrow(why)
  })
})
