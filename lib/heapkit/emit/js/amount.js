// SPDX-License-Identifier: MIT
// Amounts as the CLI prints them (emit/quantity.cpp): bytes in B, kB, MB, GB, TB, 1024
// apart, with two decimals; counts as they are; shares with two decimals; counts with
// thousands separators. tests/vectors/filters_and_amounts.json holds the cases both
// languages are run through, ties among them.
"use strict";

// x with two decimals as fmt's "{:.2f}" writes it: the double's exact value rounded, a tie
// to even. toFixed takes a tie up: 1664 B is 1.625 kB, "1.62kB" in --text and "1.63kB"
// from toFixed. A tie at two decimals is a multiple of 1/8, so it is found, and broken,
// exactly.
function fixed2(x) {
  const hundredths = x * 100;
  const below = Math.floor(hundredths);
  if (!Number.isInteger(x * 8) || hundredths - below !== 0.5) {
    return x.toFixed(2);
  }
  const n = below % 2 === 0 ? below : below + 1;
  return (n < 0 ? "-" : "") + Math.floor(Math.abs(n) / 100) + "." +
    String(Math.abs(n) % 100).padStart(2, "0");
}

const AMOUNT_UNITS = ["B", "kB", "MB", "GB", "TB"];

// quantity(value, bytes) of emit/quantity.cpp: "240.00kB", "512B", "-1.50MB"; a count as
// it is.
function amountText(value, bytes) {
  if (!bytes) {
    return String(value);
  }
  let magnitude = Math.abs(value);
  let unit = 0;
  while (magnitude >= 1024 && unit + 1 < AMOUNT_UNITS.length) {
    magnitude /= 1024;
    unit++;
  }
  if (unit === 0) {
    return value + "B";
  }
  return (value < 0 ? "-" : "") + fixed2(magnitude) + AMOUNT_UNITS[unit];
}

// The share `part` is of `total`, as percent_of() writes it, with its "%": "12.50%"; a
// negative part's share without its sign, "0.00%" of nothing.
function percentText(part, total) {
  return total === 0 ? "0.00%" : fixed2(Math.abs(100 * part / total)) + "%";
}

// with_thousands(): 1234567 is "1,234,567".
function withThousands(value) {
  return String(value).replace(/\B(?=(\d{3})+$)/g, ",");
}
