// SPDX-License-Identifier: MIT
// The growth of a suspect's stack within the chosen window, as heapfold --growth gives it
// for the window's dumps alone (growth/trend.cpp and growth/stack_trends.cpp): a line
// fitted within each run (a process) with one shared slope, how well it fits (R squared), the
// slope of each run's later half, and that growth dropped where it adds up to less than
// one step of the stack's values or where the value stopped moving.
"use strict";

// Sums of squares about each run's own means, added over runs.
function moments(x, y, runs) {
  const m = {sxx: 0, sxy: 0, syy: 0};
  runs.forEach(([begin, end]) => {
    const n = end - begin;
    if (n < 2) {
      return; // one point fixes its run's intercept and says nothing of the slope
    }
    let mx = 0;
    let my = 0;
    for (let i = begin; i < end; i++) {
      mx += x[i];
      my += y[i];
    }
    mx /= n;
    my /= n;
    for (let i = begin; i < end; i++) {
      m.sxx += (x[i] - mx) * (x[i] - mx);
      m.sxy += (x[i] - mx) * (y[i] - my);
      m.syy += (y[i] - my) * (y[i] - my);
    }
  });
  return m;
}

function fitTrend(x, y, runs) {
  const all = moments(x, y, runs);
  const late = moments(x, y, runs.map(([b, e]) => [b + Math.floor((e - b) / 2), e]));
  const slope = all.sxx > 0 ? all.sxy / all.sxx : 0;
  const r2 = all.sxx > 0 && all.syy > 0 ? Math.min(1, all.sxy * all.sxy / (all.sxx * all.syy)) : 0;
  return {slope: slope, r2: r2, late: late.sxx > 0 ? late.sxy / late.sxx : slope};
}

// The window's runs: [begin, end) pairs of dump indexes, cut from the series' runs.
function windowRuns(from, to) {
  const bounds = D.series.bounds;
  const runs = [];
  for (let r = 0; r + 1 < bounds.length; r++) {
    const begin = Math.max(bounds[r], from);
    const end = Math.min(bounds[r + 1], to + 1);
    if (begin < end) {
      runs.push([begin, end]);
    }
  }
  return runs;
}

// True when some run holds two dumps of different times: the window is timed.
function timedWindow(runs) {
  const xs = D.series.seconds;
  return runs.some(([b, e]) => xs.slice(b, e).some((v) => v !== xs[b]));
}

// The smallest change the values made from one dump to the next within a run.
function smallestStep(values, runs) {
  let step = 0;
  runs.forEach(([b, e]) => {
    for (let i = b + 1; i < e; i++) {
      const change = Math.abs(values[i] - values[i - 1]);
      if (change > 0 && (step === 0 || change < step)) {
        step = change;
      }
    }
  });
  return step;
}

// True when the value held still over the last quarter (3 dumps at least) of every run
// of 4 dumps or more, and some run was that long.
function stoppedGrowing(values, runs) {
  let told = false;
  for (const [b, e] of runs) {
    if (e - b < 4) {
      continue;
    }
    const tail = Math.max(3, Math.floor((e - b + 3) / 4));
    for (let i = e - tail; i < e; i++) {
      if (values[i] !== values[e - 1]) {
        return false;
      }
    }
    told = true;
  }
  return told;
}

// A suspect's figures in the window from dump `from` to dump `to`: {growth (per second
// where the window is timed, else per dump), r2, first, last, timed}.
function windowGrowth(values, from, to) {
  const runs = windowRuns(from, to);
  const timed = timedWindow(runs);
  const x = timed ? D.series.seconds : values.map((v, i) => i);
  const trend = fitTrend(x, values, runs);
  const span = runs.reduce((sum, [b, e]) => sum + x[e - 1] - x[b], 0);
  let late = trend.late;
  if (Math.abs(late * trend.r2) * span < smallestStep(values, runs) * (1 - 1e-9) ||
      stoppedGrowing(values, runs)) {
    late = 0;
  }
  return {growth: late * trend.r2, r2: trend.r2, first: values[from], last: values[to], timed: timed};
}
