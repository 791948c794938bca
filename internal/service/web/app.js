// The page of `sledge serve`: plain JavaScript over the JSON API
// (docs/serve.md). The token comes once from #token=… or the form and is
// kept in localStorage; every API call sends it as a bearer token, the
// live stream too (fetch streaming: EventSource cannot send headers).
"use strict";

const TOKEN_KEY = "sledge.token";
const $ = (sel, root = document) => root.querySelector(sel);
const LIVE = new Set(["queued", "running"]);

let token = "";
let openId = 0;            // the job shown in #detail
let liveAbort = null;      // stops the live stream of #detail
const picked = new Set();  // jobs chosen for side by side

function el(tag, attrs = {}, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") e.className = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v);
  }
  for (const k of kids) if (k != null) e.append(k instanceof Node ? k : String(k));
  return e;
}

function fmt(v, digits = 0) {
  if (v == null || Number.isNaN(v)) return "–";
  if (typeof v !== "number") return String(v);
  return v.toLocaleString("en-US", { maximumFractionDigits: digits });
}

async function api(path, opts = {}) {
  const r = await fetch(path, { ...opts, headers: { ...(opts.headers || {}), Authorization: "Bearer " + token } });
  if (r.status === 401) { askToken("The token was refused: give the current one."); throw new Error("unauthorized"); }
  const body = r.status === 204 ? null : await r.json().catch(() => null);
  if (!r.ok) throw new Error((body && body.error) || r.status + " " + r.statusText);
  return body;
}

// --- token ---

function askToken(msg) {
  $("#app").hidden = true;
  $("#token-box").hidden = false;
  $("#forget").hidden = true;
  $("#conn").textContent = msg || "";
}

function useToken(t) {
  token = t;
  localStorage.setItem(TOKEN_KEY, t);
  $("#token-box").hidden = true;
  $("#app").hidden = false;
  $("#forget").hidden = false;
  $("#conn").textContent = "";
  refresh();
  loadDatabases();
}

// --- new job ---

function specFromForm() {
  const kind = $("#f-kind").value, opts = {};
  const vus = $("#f-vus").value.trim(), dur = $("#f-duration").value.trim(), ramp = $("#f-rampup").value.trim();
  const mode = $("#f-mode").value;
  const num = (s) => (/^\d+$/.test(s) ? Number(s) : s);
  if (kind === "run") {
    if (vus) opts.vus = num(vus);
    if (dur) opts.duration = dur;
    if (ramp) opts.rampup = ramp;
    if (mode) opts.mode = mode;
  } else if (kind === "compare") {
    if (vus) opts.vus = vus;
    if (dur) opts.duration = dur;
    if (ramp) opts.rampup = ramp;
    if (mode) opts.modes = mode;
  } else if (kind === "build") {
    if (vus) opts["build-vus"] = num(vus);
  }
  const spec = { kind, workload: $("#f-workload").value, options: opts };
  const db = $("#f-db").value.trim();
  if (db) spec.db = db;
  if ($("#f-concurrent").checked) spec.concurrent = true;
  return spec;
}

async function submitJob(ev) {
  ev.preventDefault();
  $("#f-error").textContent = "";
  try {
    const { id } = await api("/api/jobs", { method: "POST", body: JSON.stringify(specFromForm()) });
    await refresh();
    openJob(id);
  } catch (e) {
    $("#f-error").textContent = e.message;
  }
}

async function loadDatabases() {
  try {
    const { databases } = await api("/api/databases");
    $("#dbs").replaceChildren(...databases.filter((d) => !d.default).map((d) => el("option", { value: d.url })));
  } catch (e) { /* the form works without suggestions */ }
}

// --- job list ---

async function refresh() {
  let jobs;
  try {
    ({ jobs } = await api("/api/jobs?limit=100"));
  } catch (e) {
    $("#conn").textContent = "cannot list jobs: " + e.message;
    return;
  }
  $("#conn").textContent = "";
  const rows = jobs.map((j) => {
    const r = j.result || {};
    const box = el("input", { type: "checkbox", title: "pick for side by side", onclick: (e) => e.stopPropagation(),
      onchange: (e) => { e.target.checked ? picked.add(j.id) : picked.delete(j.id); sideButton(); } });
    box.checked = picked.has(j.id);
    const tr = el("tr", { "data-id": j.id, class: j.id === openId ? "open" : "", onclick: () => openJob(j.id) },
      el("td", {}, box), el("td", {}, "#" + j.id), el("td", {}, j.kind), el("td", {}, j.workload),
      el("td", {}, j.database), el("td", {}, el("span", { class: "status " + j.status }, j.status)),
      el("td", {}, new Date(j.started).toLocaleString()),
      el("td", { class: "num" }, fmt(r.tpm)), el("td", { class: "num" }, fmt(r.nopm)));
    return tr;
  });
  $("#jobs tbody").replaceChildren(...rows);
  sideButton();
}

function sideButton() {
  const b = $("#side-by-side");
  b.disabled = picked.size !== 2;
  b.textContent = picked.size === 2 ? "Side by side: #" + [...picked].join(" and #") : "Side by side (pick two)";
}

async function sideBySide() {
  const side = $("#side");
  side.hidden = false;
  side.replaceChildren();
  for (const id of [...picked].slice(0, 2)) {
    const box = el("div", { class: "job" });
    side.append(box);
    const j = await api("/api/jobs/" + id);
    await renderJob(box, j, false);
  }
  side.scrollIntoView();
}

// --- one job ---

async function openJob(id) {
  openId = id;
  for (const tr of document.querySelectorAll("#jobs tbody tr")) tr.classList.toggle("open", Number(tr.dataset.id) === id);
  if (liveAbort) { liveAbort.abort(); liveAbort = null; }
  const box = $("#detail");
  try {
    const j = await api("/api/jobs/" + id);
    if (openId !== id) return;
    box.replaceChildren();
    box.className = "job";
    await renderJob(box, j, true);
  } catch (e) {
    box.replaceChildren(el("p", { class: "error" }, e.message));
  }
}

async function renderJob(box, j, main) {
  const head = el("h2", {}, `#${j.id} ${j.kind} ${j.workload} on ${j.database} `,
    el("span", { class: "status " + j.status, "data-role": "status" }, j.status));
  box.append(head);
  if (main) {
    const acts = el("p");
    if (LIVE.has(j.status)) acts.append(el("button", { type: "button", onclick: () => stopJob(j.id) }, "Stop"));
    else acts.append(el("button", { type: "button", onclick: () => deleteJob(j.id) }, "Delete"));
    box.append(acts);
  }
  if (j.error) box.append(el("p", { class: "error" }, j.error));
  const facts = [["mode", j.mode], ["VUs", j.vus], ["driver", j.db && j.db.driver], ["version", j.db && j.db.version],
    ["transport", j.db && j.db.transport], ["started", new Date(j.started).toLocaleString()],
    ["ended", j.ended ? new Date(j.ended).toLocaleString() : null]].filter(([, v]) => v);
  box.append(el("p", { class: "muted" }, facts.map(([k, v]) => k + ": " + v).join(" · ")));
  if (main && LIVE.has(j.status)) box.append(liveBlock(j));
  if (j.kind === "run") await throughput(box, j);
  if (j.kind === "run" && !(main && LIVE.has(j.status))) await systemCharts(box, j);
  if (j.result) renderResult(box, j);
  box.append(el("details", {}, el("summary", {}, "spec"), el("pre", {}, JSON.stringify(j.spec, null, 1))));
}

async function stopJob(id) {
  try { await api(`/api/jobs/${id}/stop`, { method: "POST" }); } catch (e) { alert(e.message); }
  await refresh();
  openJob(id);
}

async function deleteJob(id) {
  try { await api("/api/jobs/" + id, { method: "DELETE" }); } catch (e) { alert(e.message); return; }
  picked.delete(id);
  $("#detail").replaceChildren();
  openId = 0;
  refresh();
}

function chartWidth(box) {
  return Math.max(320, Math.min(900, (box.clientWidth || 800) - 30));
}

function lineChart(box, title, xLabel, series, data) {
  const holder = el("div", { class: "chart" });
  box.append(holder);
  const colors = ["#2563eb", "#16a34a", "#d97706", "#9333ea", "#dc2626", "#0891b2"];
  return new uPlot({
    title, width: chartWidth(box), height: 240, scales: { x: { time: false } },
    axes: [{ label: xLabel }, { size: 70 }],
    series: [{ label: xLabel }, ...series.map((s, i) => ({ label: s, stroke: colors[i % colors.length], width: 2 }))],  // uPlot shows points only while they are sparse: a first tick is visible
  }, data, holder);
}

// liveBlock follows a running job: the latest TPM and NOPM and a chart
// that grows with each tick of the event stream.
function liveBlock(j) {
  const block = el("div", { class: "live" });
  const tpm = el("b", { class: "live-tpm" }, "–"), nopm = el("b", { class: "live-nopm" }, "–");
  const phase = el("span", { class: "live-phase muted" }, j.status);
  // Live rates are sledge's own counts each second; the result's headline
  // comes from the database.
  block.append(el("h3", {}, "Live ", phase, el("span", { class: "muted" }, " · counted by sledge, each second")),
    el("div", { class: "figures" }, el("span", {}, "TPM", tpm), el("span", {}, "NOPM", nopm)));
  const data = [[], [], []], lat = [[], []];
  let chart = null, latChart = null;
  liveAbort = new AbortController();
  const signal = liveAbort.signal;
  events(j.id, signal, (t) => {
    tpm.textContent = fmt(t.tpm);
    nopm.textContent = fmt(t.nopm);
    phase.textContent = t.phase;
    data[0].push(t.t); data[1].push(t.tpm); data[2].push(t.nopm);
    block.dataset.ticks = data[0].length; // how many seconds the chart holds
    if (!chart) chart = lineChart(block, "transactions per minute (live)", "s", ["TPM", "NOPM"], data);
    else chart.setData(data);
    lat[0].push(t.t); lat[1].push(t.mean_ms);
    if (!latChart) latChart = lineChart(block, "mean latency, ms (live)", "s", ["mean"], lat);
    else latChart.setData(lat);
  }, () => { if (!signal.aborted && openId === j.id) { refresh(); openJob(j.id); } }, liveSystem(block));
  return block;
}

// events reads the job's Server-Sent Events with fetch, so that the
// token travels in the Authorization header.
async function events(id, signal, onTick, onDone, onSystem) {
  try {
    const r = await fetch(`/api/jobs/${id}/events`, { headers: { Authorization: "Bearer " + token }, signal });
    if (!r.ok) return;
    const reader = r.body.getReader(), dec = new TextDecoder();
    let buf = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += dec.decode(value, { stream: true });
      let i;
      while ((i = buf.indexOf("\n\n")) >= 0) {
        const block = buf.slice(0, i);
        buf = buf.slice(i + 2);
        let event = "message", data = "";
        for (const line of block.split("\n")) {
          if (line.startsWith("event: ")) event = line.slice(7);
          else if (line.startsWith("data: ")) data += line.slice(6);
        }
        if (event === "tick") onTick(JSON.parse(data));
        if (event === "system" && onSystem) onSystem(JSON.parse(data));
        if (event === "done") { onDone(JSON.parse(data)); return; }
      }
    }
  } catch (e) { /* aborted, or the service went away */ }
}

async function throughput(box, j) {
  const ts = await api(`/api/jobs/${j.id}/timeseries`);
  if (!ts.samples.length) return;
  const x = ts.samples.map((s) => s.elapsed_ms / 1000);
  const series = ["TPM"], data = [x, ts.samples.map((s) => s.tpm)];
  if (ts.meter) { series.push(ts.meter); data.push(ts.samples.map((s) => s.nopm)); }
  box.append(el("h3", {}, "Throughput"));
  lineChart(box, "transactions per minute, each second", "s", series, data);
  if (ts.samples.some((s) => s.mean_ms != null)) {
    box.append(el("h3", {}, "Latency over time"));
    lineChart(box, "mean latency each second, ms", "s", ["mean"], [x, ts.samples.map((s) => s.mean_ms)]);
  }
  // Failed transactions (not retried, or out of retries) each second; the
  // result's table has the retries per type.
  box.append(el("h3", {}, "Errors"));
  lineChart(box, "failed transactions, each second", "s", ["failed"], [x, ts.samples.map((s) => s.errors)]);
}

// --- the server's side, each second (issue 25) ---
// The run's sampler reads the database server's processes (through sledge
// agent, or in-process) and sledge's own host each second: the server's
// CPU in cores and the shares of its thread samples by state, live from
// the events stream's "system" events and, for a finished job, from
// /api/jobs/{id}/system.

const SYS_STATES = ["cpu", "runnable", "network", "lock", "io", "idle"];

// systemSeries turns the server's points into the two charts' data.
function systemSeries(points) {
  const srv = points.filter((p) => p.source === "server" && p.cpu_user != null);
  const x = srv.map((p) => p.t);
  return {
    n: srv.length,
    cpu: [x, srv.map((p) => p.cpu_user), srv.map((p) => p.cpu_sys)],
    states: [x, ...SYS_STATES.map((s) => srv.map((p) => (p.states ? p.states[s] : null)))],
  };
}

function systemChartsInto(box, d, live) {
  const tag = live ? " (live)" : ", each second";
  return {
    cpu: lineChart(box, "server CPU, cores" + tag, "s", ["user", "sys"], d.cpu),
    states: lineChart(box, "server thread states, share of samples" + tag, "s", SYS_STATES, d.states),
  };
}

// systemCharts draws a finished job's server seconds, if it has any.
async function systemCharts(box, j) {
  let sys;
  try { sys = await api(`/api/jobs/${j.id}/system`); } catch (e) { return; }
  const d = systemSeries(sys.samples || []);
  if (!d.n) return;
  const sec = el("div", { class: "system", "data-seconds": d.n });
  box.append(sec);
  sec.append(el("h3", {}, "The server, each second"));
  systemChartsInto(sec, d, false);
}

// liveSystem returns the handler of a running job's "system" events: its
// charts appear with the first second of the server.
function liveSystem(block) {
  const points = [];
  let sec = null, charts = null;
  return (p) => {
    if (p.source !== "server" || p.cpu_user == null) return;
    points.push(p);
    const d = systemSeries(points);
    if (!sec) {
      sec = el("div", { class: "system live-system" });
      block.append(sec);
      sec.append(el("h3", {}, "The server", el("span", { class: "muted" }, " · its processes' CPU and threads, each second")));
      charts = systemChartsInto(sec, d, true);
    } else {
      charts.cpu.setData(d.cpu);
      charts.states.setData(d.states);
    }
    sec.dataset.seconds = d.n;
  };
}

// barChart draws one value per named bar (uPlot's bars path builder).
function barChart(box, title, names, series, data) {
  const holder = el("div", { class: "chart" });
  box.append(holder);
  const colors = ["#2563eb", "#d97706", "#dc2626", "#16a34a"];
  const bars = uPlot.paths.bars({ size: [0.6 / series.length], align: 1 });
  return new uPlot({
    title, width: chartWidth(box), height: 220, scales: { x: { time: false, range: [-0.5, names.length - 0.5] } },
    axes: [{ values: (u, vals) => vals.map((v) => names[v] ?? ""), splits: () => names.map((_, i) => i) }, { size: 70 }],
    series: [{ label: "" }, ...series.map((n, i) => ({ label: n, stroke: colors[i % colors.length],
      fill: colors[i % colors.length] + "99", paths: bars, points: { show: false } }))],
  }, [names.map((_, i) => i), ...data], holder);
}

const PCTS = [["p50_ms", 50], ["p90_ms", 90], ["p95_ms", 95], ["p99_ms", 99], ["max_ms", 100]];

function renderResult(box, j) {
  const r = j.result;
  if (j.kind === "compare" && Array.isArray(r.cells)) return compareMatrix(box, r);
  if (j.kind === "check" && Array.isArray(r.checks)) {
    box.append(el("h3", {}, r.ok ? "All conditions hold" : "A condition failed"), table(["check", "status", "detail"],
      r.checks.map((c) => [c.name, c.status || (c.ok ? "pass" : "fail"), c.detail || ""])));
    return;
  }
  if (j.kind !== "run") {
    box.append(table(["figure", "value"], Object.entries(r).filter(([, v]) => typeof v !== "object").map(([k, v]) => [k, fmt(v, 2)])));
    return;
  }
  box.append(el("div", { class: "figures" }, ...[["TPM", r.tpm], ["NOPM", r.nopm], ["TPS", r.tps], ["failed", r.failed],
    ["retried", r.retried], ["measured s", r.duration_s]].filter(([, v]) => v != null)
    .map(([k, v]) => el("span", {}, k, el("b", {}, fmt(v, 1))))));
  if (r.analytic) analyticBlock(box, r.analytic);
  // Latency: per transaction type (TPC-C) or for all (tpcb, scripts).
  let types = [];
  if (r.transactions && typeof r.transactions === "object") types = Object.entries(r.transactions);
  else if (r.p50_ms != null) types = [["all", r]];
  if (types.length) {
    box.append(el("h3", {}, "Latency percentiles (ms)"));
    const withP = types.filter(([, t]) => t.p50_ms != null);
    lineChart(box, "latency by percentile", "percentile", withP.map(([n]) => n),
      [PCTS.map(([, p]) => p), ...withP.map(([, t]) => PCTS.map(([k]) => t[k] ?? null))]);
    box.append(table(["type", "count", "rollbacks", "errors", "retried", "p50", "p90", "p95", "p99", "max"],
      types.map(([n, t]) => [n, fmt(t.count ?? t.transactions), fmt(t.rollbacks), fmt(t.errors ?? t.failed), fmt(t.retried),
        ...PCTS.map(([k]) => fmt(t[k], 2))])));
  }
  const cost = r.per_txn;
  if (cost) {
    box.append(el("h3", {}, "Cost per transaction"));
    const keys = Object.keys(cost).filter((k) => typeof cost[k] !== "object");
    const rows = [["all", ...keys.map((k) => fmt(cost[k], 1))]];
    for (const [n, t] of types) if (t.per_txn && n !== "all") rows.push([n, ...keys.map((k) => fmt(t.per_txn[k], 1))]);
    box.append(table(["type", ...keys], rows));
    // Where a transaction's time goes, client and server, in µs of CPU:
    // the client's per type where measured (--per-type-cpu), the server's
    // for all (it cannot tell types apart).
    const srv = r.server_per_txn || {};
    const names = ["all", ...types.filter(([n, t]) => n !== "all" && t.per_txn && t.per_txn.client_cpu_us != null).map(([n]) => n)];
    const client = names.map((n) => (n === "all" ? cost : r.transactions[n].per_txn).client_cpu_us ?? null);
    const user = names.map((n) => (n === "all" ? srv.cpu_user_us ?? null : null));
    const sys = names.map((n) => (n === "all" ? srv.cpu_sys_us ?? null : null));
    barChart(box, "CPU µs per transaction", names, ["client CPU", "server CPU user", "server CPU sys"], [client, user, sys]);
  }
  serverSide(box, r);
}

// mixedCompare shows a mixed compare (compare ch): what the terminals and
// the analytic streams cost each other, a table and two charts per group.
function mixedCompare(box, groups) {
  for (const g of groups) {
    box.append(el("h3", {}, `What each side costs the other: ${g.mode} · ${g.transport} · ${g.vus} VUs · ${g.streams} streams`));
    box.append(table(["", "alone", "both", "both / alone"], [
      ["NOPM (terminals, from the database)", fmt(g.nopm_alone), fmt(g.nopm_with_analytic), fmt(g.nopm_ratio, 2)],
      ["queries per hour (streams, measured by sledge)", fmt(g.qph_alone, 1), fmt(g.qph_with_terminals, 1), fmt(g.qph_ratio, 2)],
      ...g.queries.map((q) => [q.query + " mean s", fmt(q.alone_s, 3), fmt(q.with_terminals_s, 3), fmt(q.slowdown, 2)]),
    ], "interference"));
    barChart(box, "NOPM: terminals alone and beside the streams", ["NOPM"], ["alone", "beside the streams"],
      [[g.nopm_alone ?? null], [g.nopm_with_analytic ?? null]]);
    barChart(box, "mean seconds per query: streams alone and beside the terminals", g.queries.map((q) => q.query),
      ["alone", "beside the terminals"], [g.queries.map((q) => q.alone_s ?? null), g.queries.map((q) => q.with_terminals_s ?? null)]);
  }
}

// analyticBlock shows a mixed run's analytic streams (run ch).
function analyticBlock(box, a) {
  box.append(el("h3", {}, `Analytic streams: ${a.streams}, ${fmt(a.queries)} queries in the measured interval`));
  box.append(el("div", { class: "figures" }, el("span", {}, "queries per hour", el("b", {}, fmt(a.queries_per_hour, 1))),
    el("span", {}, "failed", el("b", {}, fmt(a.failed)))));
  barChart(box, "mean seconds per query (measured by sledge)", a.per_query.map((q) => q.query), ["mean s"],
    [a.per_query.map((q) => (q.count ? q.avg_s : null))]);
  box.append(table(["query", "count", "failed", "mean s", "min s", "max s", "rows"],
    a.per_query.map((q) => [q.query, fmt(q.count), fmt(q.failed), fmt(q.avg_s, 3), fmt(q.min_s, 3), fmt(q.max_s, 3), fmt(q.rows)]), "analytic"));
}

function compareMatrix(box, r) {
  if (Array.isArray(r.interference) && r.interference.length) return mixedCompare(box, r.interference);
  const vus = [...new Set(r.cells.map((c) => c.vus))].sort((a, b) => a - b);
  const rowsKey = [...new Set(r.cells.map((c) => c.mode + " / " + c.transport))];
  const rows = rowsKey.map((k) => [k, ...vus.map((v) => {
    const c = r.cells.find((c) => c.mode + " / " + c.transport === k && c.vus === v);
    if (!c) return "";
    return (c.nopm != null ? fmt(c.nopm) + " NOPM" : fmt(c.tpm) + " TPM") + (c.ratio != null ? " (×" + fmt(c.ratio, 2) + ")" : "");
  })]);
  box.append(el("h3", {}, "Matrix"), table(["mode / transport", ...vus.map((v) => v + " VUs")], rows, "matrix"));
  const x = vus, series = rowsKey, data = [x, ...rowsKey.map((k) => vus.map((v) => {
    const c = r.cells.find((c) => c.mode + " / " + c.transport === k && c.vus === v);
    return c ? (c.nopm ?? c.tpm) : null;
  }))];
  lineChart(box, "throughput by VUs", "VUs", series, data);
  compareServerSide(box, r);
}

// --- the server's side (issue 25): what sledge's sampler measured of the
// server (through sledge agent or in-process) and of sledge's own host ---

// Thread states in drawing order with their colours (the compare HTML's:
// the server's CPU and the network have the colours of server CPU and
// waiting there).
const STATES = [["cpu", "cpu", "#d55e00"], ["runnable", "runnable (waiting for a CPU)", "#cc79a7"],
  ["network", "network (socket, poll)", "#e69f00"], ["lock", "lock (futex)", "#009e73"], ["io", "io (disk)", "#56b4e9"],
  ["idle", "idle", "#c8c8c8"]];

const pct = (v) => (v == null ? "–" : fmt(v * 100, 1) + "%");

// stateBar is one stacked bar of the server's thread states, a segment
// per state as wide as its share, its value on hover.
function stateBar(t) {
  const bar = el("div", { class: "state-bar", role: "img", "aria-label": "server thread states" });
  for (const [k, name, color] of STATES) {
    const v = t[k] || 0;
    bar.append(el("span", { class: "seg", "data-state": k, style: `width:${v * 100}%;background:${color}`,
      title: `${name}: ${pct(v)}` }));
  }
  return bar;
}

function stateLegend() {
  return el("p", { class: "state-legend muted" }, ...STATES.map(([, name, color]) =>
    el("span", {}, el("i", { style: "background:" + color }), name)));
}

// whyNoThreads says why a run has no thread states.
function whyNoThreads(r) {
  const m = (r.server_per_txn && r.server_per_txn.missing) || {};
  return (r.server_threads && r.server_threads.note) || m.server_threads || m.cpu || "no agent";
}

function serverSide(box, r) {
  const sec = el("div", { class: "server-side" });
  box.append(sec);
  sec.append(el("h3", {}, "The server's side"));
  const a = r.agent;
  if (a) {
    sec.append(el("p", { class: "agent" + (a.partial ? " warning" : "") }, `agent ${a.address}, version ${a.version}, API ${a.api}` +
      (a.partial ? ` · partial: the agent did not answer for ${a.seconds_missed} s; the figures cover the rest` : "") +
      (a.note ? " · " + a.note : "")));
  }
  const t = r.server_threads;
  if (t && t.samples > 0) {
    sec.append(el("p", { class: "muted" }, `where the server's threads were: ${fmt(t.samples)} samples at ${t.hz} Hz of ${t.threads} threads, ${t.source}`),
      stateBar(t), stateLegend(),
      table(["state", ...STATES.map(([k]) => k)], [["share", ...STATES.map(([k]) => pct(t[k]))]], "states"));
  } else {
    sec.append(el("p", { class: "muted no-threads" }, "server threads not sampled: " + whyNoThreads(r)));
  }
  const s = r.server_per_txn;
  if (s) {
    const figs = [["CPU user µs", s.cpu_user_us], ["CPU sys µs", s.cpu_sys_us], ["context switches", s.context_switches],
      ["voluntary switches", s.voluntary_switches], ["involuntary switches", s.involuntary_switches],
      ["run-queue delay µs", s.run_queue_delay_us], ["port bytes in", s.port_bytes_in], ["port bytes out", s.port_bytes_out],
      ["syscall read bytes", s.syscall_read_bytes], ["syscall write bytes", s.syscall_write_bytes]].filter(([, v]) => v != null);
    if (figs.length) {
      sec.append(el("h3", {}, "Server per transaction"), table(["figure", "value"], figs.map(([k, v]) => [k, fmt(v, 1)]), "server-per-txn"));
    }
  }
  for (const [key, what] of [["server_host", "The server's host"], ["client_host", "sledge's host"]]) {
    const h = r[key];
    if (!h) continue;
    const shares = ["usr", "nice", "sys", "iowait", "irq", "softirq", "steal", "idle"];
    sec.append(el("h3", {}, `${what}: CPU shares (${h.cpus} CPUs, ${h.source})`),
      table(shares, [shares.map((k) => pct(h[k]))], "host-cpu " + key.replace("_", "-")));
    if (h.other_cpu_cores != null) {
      sec.append(el("p", { class: "muted" }, `other processes: ${fmt(h.other_cpu_cores, 2)} cores (${pct(h.other_cpu_share)})`));
    }
    if (h.warning) sec.append(el("p", { class: "warning", "data-role": key + "-warning" }, h.warning));
  }
  const st = r.server_stacks;
  if (st) {
    sec.append(el("h3", {}, "On-CPU stacks"));
    if (st.folded) {
      sec.append(el("p", { class: "muted" }, `${fmt(st.samples)} samples at ${st.hz} Hz, ${st.source} · scroll to zoom, drag to move`));
      const holder = el("div", { class: "flame" });
      sec.append(holder);
      sledgeFlame(holder, st.folded, chartWidth(box));
    } else {
      sec.append(el("p", { class: "muted" }, "no stacks: " + (st.why || "none were sampled")));
    }
  }
}

// compareServerSide draws each cell's thread states, one bar per cell.
function compareServerSide(box, r) {
  if (!r.cells.some((c) => c.server_threads)) return;
  box.append(el("h3", {}, "Where the server's threads were, per cell"), stateLegend());
  const rows = r.cells.map((c) => {
    const t = c.server_threads;
    return el("tr", {}, el("td", {}, `${c.mode} / ${c.transport} / ${c.vus} VUs`),
      el("td", { class: "bar-cell" }, t && t.samples > 0 ? stateBar(t) : el("span", { class: "muted" }, "not sampled: " + whyNoThreads(c))));
  });
  box.append(el("table", { class: "cell-states" }, el("tbody", {}, ...rows)));
}

function table(head, rows, cls = "") {
  return el("table", { class: cls }, el("thead", {}, el("tr", {}, ...head.map((h) => el("th", {}, h)))),
    el("tbody", {}, ...rows.map((r) => el("tr", {}, ...r.map((c, i) => el("td", { class: i ? "num" : "" }, c))))));
}

// --- start ---

function start() {
  $("#token-form").addEventListener("submit", (e) => { e.preventDefault(); useToken($("#token-input").value.trim()); });
  $("#forget").addEventListener("click", () => { localStorage.removeItem(TOKEN_KEY); askToken("Token forgotten."); });
  $("#new-form").addEventListener("submit", submitJob);
  $("#side-by-side").addEventListener("click", sideBySide);
  const m = /(?:^#|&)token=([^&]+)/.exec(location.hash);
  if (m) {
    // Keep it, and take it out of the address bar and history.
    localStorage.setItem(TOKEN_KEY, decodeURIComponent(m[1]));
    history.replaceState(null, "", location.pathname + location.search);
  }
  const t = localStorage.getItem(TOKEN_KEY);
  if (t) useToken(t); else askToken();
  setInterval(() => { if (token && !$("#app").hidden) refresh(); }, 2000);
}

start();
