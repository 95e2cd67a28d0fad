// SPDX-License-Identifier: MIT
// Source: the selected function's lines, what ends at each (flat) and what passes (cum),
// in the excerpts of its files the report carries (source_excerpts.cpp).
"use strict";

// Per file:line of the function's frames: what ends there (flat) and passes (cum).
function linesOf(id) {
  const lines = new Map();
  const values = D.columns[columns().now][state.type];
  const keep = tree.leaves().keep;
  for (let leaf = 0; leaf < D.leaves.length; leaf++) {
    if (values[leaf] === 0 || !keep[leaf]) {
      continue;
    }
    const seen = new Set();
    let first = true;
    for (let n = D.leaves[leaf]; n >= 0; n = D.parents[n]) {
      const f = D.nodeFrames[n];
      if (frameName(f) === id && !seen.has(f)) {
        seen.add(f);
        const key = frameFile(f) + ":" + frameLine(f);
        const l = lines.get(key) || {file: frameFile(f), line: frameLine(f), flat: 0, cum: 0};
        if (first) {
          l.flat += values[leaf];
        }
        l.cum += values[leaf];
        lines.set(key, l);
      }
      first = false;
    }
  }
  return lines;
}

// Where a file's text was read from, or where it was looked for in vain.
function fileNote(box, file, excerpt) {
  if (excerpt) {
    box.appendChild(el("div", {class: "missing"}, "read from " + excerpt.path));
    return;
  }
  const why = sourceMissing.get(file);
  if (file && why) {
    box.appendChild(el("div", {class: "missing"}, "Not found where the report was written; looked at: " +
      why.looked.join(", ") + (why.full ? " (the report's room for source text was full)" : "")));
  }
}

// A file's table: the excerpts that hold one of the function's lines, whole, or without
// the text, the lines alone.
function fileTable(hot, excerpt) {
  const table = el("table", {class: "source"});
  const head = el("tr");
  ["flat", "cum", "line", excerpt ? "source" : ""].forEach((h) => head.appendChild(el("th", {}, h)));
  table.appendChild(head);
  function row(line, text) {
    const l = hot.get(line);
    const tr = el("tr", {"data-line": line});
    tr.appendChild(el("td", {}, l ? quantity(l.flat) : ""));
    tr.appendChild(el("td", {}, l ? quantity(l.cum) : ""));
    tr.appendChild(el("td", {}, line ? String(line) : "-"));
    tr.appendChild(el("td", {class: "code"}, text));
    if (l) {
      tr.className = "hot";
    }
    table.appendChild(tr);
  }
  if (!excerpt) {
    Array.from(hot.keys()).sort((a, b) => a - b).forEach((line) => row(line, ""));
    return table;
  }
  excerpt.ranges.forEach(([first, texts]) => {
    let holds = false;
    hot.forEach((l, line) => {
      if (line >= first && line < first + texts.length) {
        holds = true;
      }
    });
    if (!holds) {
      return;
    }
    if (table.rows.length > 1) {
      const gap = el("tr");
      gap.appendChild(el("td", {colspan: 4}, "\u22ee"));
      table.appendChild(gap);
    }
    texts.forEach((text, i) => row(first + i, text));
  });
  return table;
}

function renderSource() {
  const box = $("source");
  const id = state.selected;
  box.replaceChildren();
  if (id < 0) {
    box.textContent = "Select a function to see its lines.";
    return;
  }
  const byFile = new Map();
  linesOf(id).forEach((l) => {
    if (!byFile.has(l.file)) {
      byFile.set(l.file, new Map());
    }
    byFile.get(l.file).set(l.line, l);
  });
  box.appendChild(el("h2", {}, "Lines of " + nameOf(id)));
  byFile.forEach((hot, file) => {
    const excerpt = sourceFiles.get(file);
    box.appendChild(el("h3", {class: "file"}, nameOf(file) || "(no file known)"));
    fileNote(box, file, excerpt);
    box.appendChild(fileTable(hot, excerpt));
  });
}
