import type { ProxySnapshot } from "../source/admin-source.js";
import { PLAN_KINDS, type PlanKind } from "../source/kinds.js";
import { DASHBOARD_SCRIPT, DASHBOARD_STYLE } from "./assets.js";
import { escapeHtml } from "./escape.js";
import type { History } from "./history.js";
import { type Bar, barChart, type MapNode, occupancyBar, placementMap, sparkline } from "./svg.js";

/** What one rendering of the dashboard looks at. */
export interface DashboardView {
  readonly snapshot: ProxySnapshot;
  readonly history: History;
}

const PLAN_TITLES: Record<PlanKind, string> = {
  one_region: "one region",
  scatter: "scatter",
  distributed_write: "distributed write",
  each_region: "each region",
  console: "console",
  refused: "refused",
};

/**
 * The whole page. Readable as is: with scripts off it reloads itself every five seconds (the
 * `<meta>` sits inside `<noscript>`, so it does nothing where the script runs); with scripts on,
 * the script replaces `#live` with {@link renderLive}'s markup once a second.
 */
export function renderPage(view: DashboardView): string {
  const { snapshot } = view;
  return (
    `<!doctype html><html lang="en"><head><meta charset="utf-8">` +
    `<meta name="viewport" content="width=device-width, initial-scale=1">` +
    `<title>geoproxy ${escapeHtml(snapshot.node)}</title>` +
    `<noscript><meta http-equiv="refresh" content="5"></noscript>` +
    `<style>${DASHBOARD_STYLE}</style></head><body>` +
    `<header><h1>geoproxy <span>${escapeHtml(snapshot.node)}</span></h1>` +
    `<span id="state" class="state">static, reloads every 5 s</span></header>` +
    `<main id="live">${renderLive(view)}</main>` +
    `<script>${DASHBOARD_SCRIPT}</script></body></html>`
  );
}

/** The part that changes: everything below the header. */
export function renderLive(view: DashboardView): string {
  return (
    renderFacts(view) +
    renderAlerts(view.snapshot) +
    renderSchemaDrift(view.snapshot) +
    renderPeers(view.snapshot) +
    renderPlacement(view) +
    renderDecisions(view.snapshot) +
    renderRefused(view.snapshot) +
    `<div class="grid">${renderRegions(view)}${renderTraffic(view)}</div>` +
    `<div class="grid">${renderLatency(view)}${renderPools(view.snapshot)}</div>` +
    renderInDoubt(view.snapshot)
  );
}

function renderFacts({ snapshot, history }: DashboardView): string {
  const rate = history.recentRate((sample) => sample.statements);
  const leftHomeRate = history.recentRate((sample) => sample.leftHome);
  const { hits, misses } = snapshot.cache;
  const ratio = hits + misses === 0 ? "—" : `${((hits / (hits + misses)) * 100).toFixed(1)}%`;
  const fact = (name: string, key: string, value: string, extra = ""): string =>
    `<div><dt>${name}</dt><dd data-live="${key}">${value}</dd>${extra}</div>`;
  return (
    `<dl class="facts">` +
    fact("home region", "home-region", escapeHtml(snapshot.homeRegion)) +
    fact("uptime", "uptime", formatDuration(snapshot.uptimeSeconds)) +
    fact("clients", "clients", `${snapshot.clients.connected} / ${snapshot.clients.max}`) +
    fact("statements", "statements-total", formatCount(snapshot.traffic.statements)) +
    fact(
      "statements/s",
      "statements-rate",
      rate === null ? "—" : rate.toFixed(1),
      sparkline(
        history.rates((sample) => sample.statements),
        "statements per second, last minute",
      ),
    ) +
    fact("left home/s", "left-home-rate", leftHomeRate === null ? "—" : leftHomeRate.toFixed(1)) +
    fact("cache hits", "cache-hit-ratio", ratio) +
    fact("in doubt", "in-doubt", String(snapshot.transactions.inDoubt.length)) +
    fact("drifted tables", "schema-drift-tables", String(snapshot.schemaDrift.tables.length)) +
    `</dl>`
  );
}

function renderAlerts(snapshot: ProxySnapshot): string {
  const items = snapshot.alerts
    .map(
      (alert) =>
        `<li><strong>${escapeHtml(alert.name)}</strong> ${escapeHtml(alert.subject)}: ${escapeHtml(alert.message)} ` +
        `<span class="none">since ${escapeHtml(alert.since)}</span></li>`,
    )
    .join("");
  return (
    `<section id="alerts"><h2>Alerts (${snapshot.alerts.length})</h2>` +
    (items === "" ? `<p class="none">None.</p>` : `<ul class="alerts">${items}</ul>`) +
    `</section>`
  );
}

function renderSchemaDrift(snapshot: ProxySnapshot): string {
  const { checkedAt, reference, tables } = snapshot.schemaDrift;
  const rows = tables
    .flatMap((table) =>
      table.regions.map(
        (region, i) =>
          `<tr>${i === 0 ? `<td rowspan="${table.regions.length}">${escapeHtml(table.table)}</td>` : ""}` +
          `<td>${escapeHtml(region.region)}</td><td>${region.status}</td>` +
          `<td>${escapeHtml(region.detail)}</td></tr>`,
      ),
    )
    .join("");
  const checked =
    checkedAt === null
      ? "Not checked yet."
      : `Compared with ${escapeHtml(reference ?? "no region")} at ${escapeHtml(checkedAt.slice(11, 19))}.`;
  return (
    `<section id="schema-drift"><h2>Schema drift (${tables.length})</h2>` +
    (rows === ""
      ? `<p class="none">${checkedAt === null ? checked : `Every region's copies alike. ${checked}`}</p>`
      : `<p class="none">${checked} SHOW SCHEMA in the console lists every copy.</p>` +
        `<table><thead><tr><th>table</th><th>region</th><th>status</th><th>what differs</th></tr></thead>` +
        `<tbody>${rows}</tbody></table>`) +
    `</section>`
  );
}

/** A shared directory's proxies; nothing at all when the directory is not shared. */
function renderPeers(snapshot: ProxySnapshot): string {
  const shared = snapshot.shared;
  if (shared === undefined) return "";
  const rows = shared.peers
    .map(
      (peer) =>
        `<tr${peer.thisProxy ? ` class="this-proxy"` : ""}><td>${escapeHtml(peer.node)}</td>` +
        `<td>${escapeHtml(peer.home)}</td>` +
        `<td class="num">${peer.heartbeatAgeMs === null ? "—" : formatAge(peer.heartbeatAgeMs)}</td>` +
        `<td class="lease-${peer.lease}">${peer.lease}</td>` +
        `<td class="num">${formatCount(peer.sessions)}</td><td class="num">${formatCount(peer.moves)}</td>` +
        `<td>${peer.thisProxy ? "this proxy" : ""}</td></tr>`,
    )
    .join("");
  const { own, peers } = shared.movesHeld;
  return (
    `<section id="peers"><h2>Peers (${shared.peers.length})</h2>` +
    `<p>Shared directory, authority <strong>${escapeHtml(shared.authority)}</strong>. ` +
    `This proxy's lease: <span data-live="lease-age">` +
    (shared.leaseAgeMs === null ? "no visit got through yet" : `${formatAge(shared.leaseAgeMs)} old`) +
    `</span> (lease_ms ${formatCount(shared.leaseMs)}). ` +
    `Moves holding keys here: <span data-live="moves-held-own">${formatCount(own)}</span> of this proxy, ` +
    `<span data-live="moves-held-peers">${formatCount(peers)}</span> of peers.</p>` +
    `<table><thead><tr><th>node</th><th>home</th><th class="num">heartbeat age</th><th>lease</th>` +
    `<th class="num">sessions</th><th class="num">moves announced</th><th></th></tr></thead>` +
    `<tbody>${rows}</tbody></table></section>`
  );
}

function regionTone(snapshot: ProxySnapshot, regionId: string): string {
  const region = snapshot.regions.find((r) => r.id === regionId);
  const primary = region?.endpoints.find((e) => e.role === "primary");
  return primary?.health ?? "unknown";
}

function renderRegions({ snapshot, history }: DashboardView): string {
  const bars: Bar[] = snapshot.regions.map((region) => {
    const rate = history.recentRate((sample) => sample.byRegion[region.id] ?? 0) ?? 0;
    const tone = regionTone(snapshot, region.id);
    return {
      label: region.home ? `${region.id} (home)` : region.id,
      value: rate,
      text: `${rate.toFixed(1)}/s${tone === "up" ? "" : `, primary ${tone}`}`,
      tone,
    };
  });
  const rows = snapshot.regions
    .flatMap((region) =>
      region.endpoints.map(
        (endpoint, i) =>
          `<tr>${i === 0 ? `<td rowspan="${region.endpoints.length}">${escapeHtml(region.id)}${region.home ? " (home)" : ""}</td>` : ""}` +
          `<td>${escapeHtml(endpoint.endpoint)}</td><td>${endpoint.role}${endpoint.drained ? ", drained" : ""}` +
          `${endpoint.inRecovery === true && endpoint.role === "primary" ? ", in recovery" : ""}</td>` +
          `<td class="health-${endpoint.health}">${endpoint.health}</td>` +
          `<td class="num">${endpoint.lagBytes === null ? "—" : formatBytes(endpoint.lagBytes)}</td></tr>`,
      ),
    )
    .join("");
  return (
    `<section id="regions"><h2>Regions</h2>` +
    barChart(bars, "statements per second by region, last ten seconds") +
    `<table><thead><tr><th>region</th><th>endpoint</th><th>role</th><th>health</th><th class="num">lag</th></tr></thead>` +
    `<tbody>${rows}</tbody></table></section>`
  );
}

function renderPlacement({ snapshot, history }: DashboardView): string {
  const { placement } = snapshot;
  const nodes: MapNode[] = placement.regions.map((region) => ({
    id: region.id,
    home: region.home,
    tone: regionTone(snapshot, region.id),
    keys: region.keys,
    rowsIn: region.rowsIn,
    rowsOut: region.rowsOut,
    rate: history.recentRate((sample) => sample.byRegion[region.id] ?? 0) ?? 0,
    bytesInRate: history.recentRate((sample) => sample.bytesIn[region.id] ?? 0) ?? 0,
    bytesOutRate: history.recentRate((sample) => sample.bytesOut[region.id] ?? 0) ?? 0,
    movingIn: placement.moves
      .filter((move) => move.to === region.id)
      .reduce((sum, move) => sum + move.keys.length, 0),
  }));
  const moves = placement.moves
    .map(
      (move) =>
        `<li>${escapeHtml(shorten(move.keys.join(", "), 120))} to <strong>${escapeHtml(move.to)}</strong> ` +
        `<span class="none">since ${escapeHtml(move.startedAt)}</span></li>`,
    )
    .join("");
  return (
    `<section id="placement"><h2>Placement</h2>` +
    placementMap(
      nodes,
      "regions with their keys, rows moved, and the statements and bytes per second between the proxy and each",
    ) +
    `<p>Moves committed since start: <span data-live="moves-done">${formatCount(placement.movesDone)}</span>. ` +
    (moves === ""
      ? `<span class="none">No move running.</span></p>`
      : `Running:</p><ul id="moves">${moves}</ul>`) +
    `</section>`
  );
}

function renderDecisions(snapshot: ProxySnapshot): string {
  const rows = snapshot.decisions
    .map(
      (decision) =>
        `<tr><td class="shape"><code class="shape">${escapeHtml(decision.shape)}</code></td>` +
        `<td>${PLAN_TITLES[decision.plan]}</td><td>${escapeHtml(decision.regions.join(", "))}</td>` +
        `<td>${escapeHtml(decision.finish)}</td><td class="num">${formatCount(decision.count)}</td>` +
        `<td class="none">${escapeHtml(decision.lastAt.slice(11, 19))}</td></tr>`,
    )
    .join("");
  return (
    `<section id="decisions"><h2>Why did it go there (recent statements, by shape)</h2>` +
    (rows === ""
      ? `<p class="none">No statement routed yet.</p>`
      : `<table><thead><tr><th>shape</th><th>plan</th><th>regions</th><th>finish</th><th class="num">count</th>` +
        `<th>last</th></tr></thead><tbody>${rows}</tbody></table>`) +
    `</section>`
  );
}

function renderRefused(snapshot: ProxySnapshot): string {
  const rows = snapshot.refusedShapes
    .map(
      (refused) =>
        `<tr><td class="shape"><code class="shape">${escapeHtml(refused.shape)}</code></td>` +
        `<td>${escapeHtml(refused.reason)}</td><td>${escapeHtml(refused.sqlstate)}</td>` +
        `<td class="num">${formatCount(refused.count)}</td>` +
        `<td class="none">${escapeHtml(refused.lastAt.slice(11, 19))}</td></tr>`,
    )
    .join("");
  return (
    `<section id="refused"><h2>Top refused shapes</h2>` +
    (rows === ""
      ? `<p class="none">Nothing refused.</p>`
      : `<table><thead><tr><th>shape</th><th>reason</th><th>SQLSTATE</th><th class="num">count</th>` +
        `<th>last</th></tr></thead><tbody>${rows}</tbody></table>`) +
    `</section>`
  );
}

function shorten(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

function renderTraffic({ snapshot, history }: DashboardView): string {
  const rows = PLAN_KINDS.map((plan) => {
    const rate = history.recentRate((sample) => sample.byPlan[plan]);
    return (
      `<tr><td>${PLAN_TITLES[plan]}</td>` +
      `<td class="num" data-live="plan-${plan}">${formatCount(snapshot.traffic.byPlan[plan])}</td>` +
      `<td class="num">${rate === null ? "—" : rate.toFixed(1)}</td>` +
      `<td>${sparkline(
        history.rates((sample) => sample.byPlan[plan]),
        `${PLAN_TITLES[plan]} statements per second`,
      )}</td></tr>`
    );
  }).join("");
  const regionRows = Object.entries(snapshot.traffic.byRegion)
    .map(
      ([region, count]) =>
        `<tr><td>${escapeHtml(region)}</td><td class="num">${formatCount(count)}</td></tr>`,
    )
    .join("");
  const reads = snapshot.traffic.multiRegionReads;
  return (
    `<section id="traffic"><h2>Traffic</h2>` +
    `<table><thead><tr><th>plan</th><th class="num">statements</th><th class="num">per s</th><th>last minute</th></tr></thead>` +
    `<tbody>${rows}</tbody></table>` +
    `<p>Multi-region reads: merged in proxy <span data-live="read-merged_in_proxy">${formatCount(reads.merged_in_proxy)}</span>, ` +
    `finished in home <span data-live="read-finished_in_home">${formatCount(reads.finished_in_home)}</span>, ` +
    `gathered <span data-live="read-gathered">${formatCount(reads.gathered)}</span>. ` +
    `Left home: ${formatCount(snapshot.traffic.leftHome)}.</p>` +
    `<table><thead><tr><th>region</th><th class="num">statements</th></tr></thead><tbody>${regionRows}</tbody></table>` +
    `</section>`
  );
}

function renderLatency({ snapshot, history }: DashboardView): string {
  const rows = snapshot.latency
    .map(
      (summary) =>
        `<tr><td>${PLAN_TITLES[summary.plan]}</td><td class="num">${summary.samples}</td>` +
        `<td class="num">${formatMs(summary.p50Ms)}</td><td class="num">${formatMs(summary.p95Ms)}</td>` +
        `<td class="num" data-live="p99-${summary.plan}">${formatMs(summary.p99Ms)}</td>` +
        `<td>${sparkline(
          history.samples.map((sample) => sample.p99Ms[summary.plan] ?? 0),
          `${PLAN_TITLES[summary.plan]} p99 latency, last minute`,
        )}</td></tr>`,
    )
    .join("");
  return (
    `<section id="latency"><h2>Latency (recent statements)</h2>` +
    `<table><thead><tr><th>plan</th><th class="num">window</th><th class="num">p50</th><th class="num">p95</th>` +
    `<th class="num">p99</th><th>p99, last minute</th></tr></thead><tbody>${rows}</tbody></table></section>`
  );
}

function renderPools(snapshot: ProxySnapshot): string {
  const rows = snapshot.pools
    .map(
      (pool) =>
        `<tr><td>${escapeHtml(pool.region)}</td><td>${escapeHtml(pool.endpoint)}</td>` +
        `<td class="num">${pool.busy}</td><td class="num">${pool.idle}</td><td class="num">${pool.waiting}</td>` +
        `<td class="num">${pool.max}</td>` +
        `<td>${occupancyBar(pool.busy, pool.idle, pool.max, `${pool.endpoint}: ${pool.busy} busy, ${pool.idle} idle of ${pool.max}`)}</td></tr>`,
    )
    .join("");
  return (
    `<section id="pools"><h2>Pools</h2>` +
    (rows === ""
      ? `<p class="none">No backend connections yet.</p>`
      : `<table><thead><tr><th>region</th><th>endpoint</th><th class="num">busy</th><th class="num">idle</th>` +
        `<th class="num">waiting</th><th class="num">max</th><th>occupancy</th></tr></thead><tbody>${rows}</tbody></table>`) +
    `</section>`
  );
}

function renderInDoubt(snapshot: ProxySnapshot): string {
  const { inDoubt, outcomes } = snapshot.transactions;
  const rows = inDoubt
    .map(
      (txn) =>
        `<tr><td>${escapeHtml(txn.gid)}</td><td>${txn.decision}</td><td>${escapeHtml(txn.regions.join(", "))}</td>` +
        `<td>${escapeHtml(txn.pending.join(", "))}</td><td>${escapeHtml(txn.decidedAt)}</td></tr>`,
    )
    .join("");
  return (
    `<section id="in-doubt"><h2>Transactions</h2>` +
    `<p>One-phase <span data-live="transaction-one_phase">${formatCount(outcomes.one_phase)}</span>, ` +
    `two-phase committed <span data-live="transaction-two_phase_committed">${formatCount(outcomes.two_phase_committed)}</span>, ` +
    `aborted <span data-live="transaction-aborted">${formatCount(outcomes.aborted)}</span>, ` +
    `in doubt <span data-live="transaction-in_doubt">${formatCount(outcomes.in_doubt)}</span>.</p>` +
    (rows === ""
      ? `<p class="none">No transaction in doubt.</p>`
      : `<table><thead><tr><th>transaction</th><th>decision</th><th>regions</th><th>not yet acknowledged</th>` +
        `<th>decided at</th></tr></thead><tbody>${rows}</tbody></table>`) +
    `</section>`
  );
}

export function formatCount(value: number): string {
  return Math.round(value).toLocaleString("en-US");
}

function formatMs(value: number | null): string {
  if (value === null) return "—";
  return value < 10 ? `${value.toFixed(2)} ms` : `${value.toFixed(0)} ms`;
}

/** Milliseconds under ten seconds, then seconds. */
export function formatAge(ms: number): string {
  return ms < 10_000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}

export function formatBytes(bytes: number): string {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"] as const;
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${bytes} B` : `${value.toFixed(1)} ${units[unit]}`;
}

export function formatDuration(totalSeconds: number): string {
  const seconds = Math.floor(totalSeconds);
  const days = Math.floor(seconds / 86_400);
  const hours = Math.floor((seconds % 86_400) / 3600);
  const minutes = Math.floor((seconds % 3600) / 60);
  if (days > 0) return `${days}d ${hours}h`;
  if (hours > 0) return `${hours}h ${minutes}m`;
  if (minutes > 0) return `${minutes}m ${seconds % 60}s`;
  return `${seconds}s`;
}
