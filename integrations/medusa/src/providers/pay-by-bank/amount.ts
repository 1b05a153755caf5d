import { MedusaError } from "@medusajs/framework/utils"
import type { BigNumberInput } from "@medusajs/framework/types"

/**
 * Medusa's amounts are in the currency's main unit (49.9 is €49.90), as
 * numbers, strings, Medusa's BigNumber or its raw `{ value }` form. The app
 * takes a string with exactly two decimals, so toAmount carries the value's
 * decimal digits over as text, never through floating-point arithmetic, and
 * refuses what a euro amount cannot be.
 */
export function toAmount(input: BigNumberInput | null | undefined): string {
  const text = decimalText(input)
  const m = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d{1,3}))?$/.exec(text)
  if (!m || (m[2] === "" && (m[3] ?? "") === "")) {
    throw invalid(`the amount ${JSON.stringify(text)} is not a number`)
  }
  const [, sign, whole, fraction = "", exponent = "0"] = m
  // Move the decimal point by the exponent on the digits themselves.
  let digits = whole + fraction
  let point = whole.length + Number(exponent)
  if (point < 0) {
    digits = "0".repeat(-point) + digits
    point = 0
  } else if (point > digits.length) {
    digits = digits + "0".repeat(point - digits.length)
  }
  const units = digits.slice(0, point).replace(/^0+(?=\d)/, "") || "0"
  const cents = digits.slice(point).replace(/0+$/, "")
  if (cents.length > 2) {
    throw invalid(`the amount ${text} has more than 2 decimals; a euro amount has at most 2`)
  }
  if (sign === "-" && /[1-9]/.test(units + cents)) {
    throw invalid(`the amount ${text} is negative`)
  }
  return `${units}.${cents.padEnd(2, "0")}`
}

function decimalText(input: unknown): string {
  if (typeof input === "string") {
    return input.trim()
  }
  if (typeof input === "number") {
    if (!Number.isFinite(input)) {
      throw invalid(`the amount ${input} is not a number`)
    }
    // The shortest text that reads back as this number: 49.9 for 49.9.
    return String(input)
  }
  if (input && typeof input === "object") {
    const o = input as Record<string, unknown>
    // bignumber.js: toFixed() without arguments writes every digit.
    if (o._isBigNumber === true && typeof o.toFixed === "function") {
      return (o.toFixed as () => string)()
    }
    // Medusa's BigNumber keeps its exact value in raw, or a bignumber.js one.
    if (o.raw && typeof o.raw === "object") {
      return decimalText(o.raw)
    }
    if (o.bigNumber && typeof o.bigNumber === "object") {
      return decimalText(o.bigNumber)
    }
    // A raw value: { value: "49.90000000000000000000", precision: 20 }.
    if ("value" in o) {
      return decimalText(o.value)
    }
  }
  throw invalid("the amount is missing")
}

function invalid(message: string): MedusaError {
  return new MedusaError(MedusaError.Types.INVALID_DATA, `Pay by bank: ${message}.`)
}
