// sledge's flame graph of folded stacks ("proc;frame;…;leaf COUNT" a
// line) over flame-chart-js (vendor/flame-chart-js, MIT): frames merged by
// name from the root down, as flamegraph.pl does, each as wide as its
// samples; the root (the process, or all of them) at the top. The same
// file is in internal/report and internal/service/web (a test keeps them
// equal).
"use strict";

function sledgeFlameTree(folded) {
  const root = { name: "all", value: 0, kids: new Map() };
  for (const raw of folded.split("\n")) {
    const line = raw.trim();
    const i = line.lastIndexOf(" ");
    if (i <= 0) continue;
    const n = Number(line.slice(i + 1));
    if (!Number.isFinite(n) || n <= 0) continue;
    root.value += n;
    let node = root;
    for (const name of line.slice(0, i).split(";")) {
      let k = node.kids.get(name);
      if (!k) { k = { name, value: 0, kids: new Map() }; node.kids.set(name, k); }
      k.value += n;
      node = k;
    }
  }
  // One process: it is the root.
  if (root.kids.size === 1) return [...root.kids.values()][0];
  return root;
}

// A warm colour per frame name (flamegraph.pl's palette), kernel frames
// (perf marks them _[k]) in orange-brown: stable across redraws.
function sledgeFlameColor(name) {
  let h = 0;
  for (let i = 0; i < name.length; i++) h = (h * 31 + name.charCodeAt(i)) >>> 0;
  const v1 = (h % 1000) / 1000, v2 = ((h >>> 10) % 1000) / 1000;
  if (name.endsWith("_[k]")) return `rgb(${Math.round(200 + 40 * v1)},${Math.round(120 + 40 * v2)},60)`;
  return `rgb(${Math.round(205 + 50 * v1)},${Math.round(80 + 150 * v2)},${Math.round(55 * v1)})`;
}

// sledgeFlame draws folded into holder (an element); the chart's canvas
// goes in it, and holder's data-frames and data-samples say what it holds.
function sledgeFlame(holder, folded, width) {
  const tree = sledgeFlameTree(folded || "");
  let frames = 0, depth = 0;
  const toNode = (t, start, d) => {
    frames++;
    depth = Math.max(depth, d + 1);
    const node = { name: t.name, start, duration: t.value, color: sledgeFlameColor(t.name), children: [] };
    let at = start;
    for (const k of [...t.kids.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      node.children.push(toNode(k, at, d + 1));
      at += k.value;
    }
    return node;
  };
  holder.dataset.samples = tree.value;
  if (!tree.value) { holder.dataset.frames = 0; return null; }
  const data = [toNode(tree, 0, 0)];
  holder.dataset.frames = frames;
  holder.dataset.depth = depth;
  const canvas = document.createElement("canvas");
  holder.append(canvas);
  canvas.width = width || Math.max(320, holder.clientWidth || 1000);
  canvas.height = Math.min(1200, 100 + depth * 17);
  return new flameChartJs.FlameChart({
    canvas, data,
    settings: { options: { timeUnits: " samples" }, styles: { main: { blockHeight: 16 } } },
  });
}
