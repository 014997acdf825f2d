// A dated table of list prices, for agents that report tokens but no cost: ralph then computes an estimate
// from the tokens (the ledger marks it `computed`, and every view says it is an estimate). Prices are US
// dollars per million tokens as the providers published them on PRICES_AS_OF; a model not in the table has
// no computed cost. Update the date with the figures.

/** The day the prices below were taken from the providers' published price lists. */
export const PRICES_AS_OF = "2025-11-01";

/** Dollars per million tokens of each kind. */
export interface Price {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
}

/** Model name patterns (lower case) and their prices, the most specific first. */
const TABLE: ReadonlyArray<readonly [RegExp, Price]> = [
  [/opus-4-5|opus-4\.5/, { input: 5, output: 25, cacheRead: 0.5, cacheWrite: 6.25 }],
  [/opus/, { input: 15, output: 75, cacheRead: 1.5, cacheWrite: 18.75 }],
  [/haiku-4|haiku-4\.5/, { input: 1, output: 5, cacheRead: 0.1, cacheWrite: 1.25 }],
  [/haiku/, { input: 0.8, output: 4, cacheRead: 0.08, cacheWrite: 1 }],
  [/sonnet/, { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 }],
  [/gpt-5.*nano/, { input: 0.05, output: 0.4, cacheRead: 0.005, cacheWrite: 0 }],
  [/gpt-5.*mini/, { input: 0.25, output: 2, cacheRead: 0.025, cacheWrite: 0 }],
  [/gpt-5/, { input: 1.25, output: 10, cacheRead: 0.125, cacheWrite: 0 }],
  [/gemini-2\.5-pro/, { input: 1.25, output: 10, cacheRead: 0.31, cacheWrite: 0 }],
  [/gemini-2\.5-flash-lite/, { input: 0.1, output: 0.4, cacheRead: 0.025, cacheWrite: 0 }],
  [/gemini-2\.5-flash/, { input: 0.3, output: 2.5, cacheRead: 0.075, cacheWrite: 0 }],
];

/** The price of `model`, or null when the table does not know it. */
export function priceOf(model: string | null): Price | null {
  if (!model) return null;
  const name = model.toLowerCase();
  for (const [pattern, price] of TABLE) if (pattern.test(name)) return price;
  return null;
}

/** The cost of `tokens` at `model`'s list price, or null when the table does not know the model. */
export function computedCostUsd(
  model: string | null,
  tokens: { input: number; output: number; cache_read: number; cache_write: number },
): number | null {
  const price = priceOf(model);
  if (!price) return null;
  const usd =
    (tokens.input * price.input +
      tokens.output * price.output +
      tokens.cache_read * price.cacheRead +
      tokens.cache_write * price.cacheWrite) /
    1_000_000;
  return Math.round(usd * 1e6) / 1e6;
}
