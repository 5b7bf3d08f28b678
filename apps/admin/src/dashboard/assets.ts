import { createHash } from "node:crypto";

/**
 * The dashboard's one script. It subscribes to /events and swaps in each server-rendered update;
 * it builds no markup itself. The page it runs in was rendered from a snapshot taken for this very
 * request, so the badge says `live` from the first paint; it turns to `reconnecting` while the
 * stream is lost. A stream refused or lost for good falls back to reloading the page, which is
 * what the page does anyway where scripts are off.
 */
export const DASHBOARD_SCRIPT = `(function () {
  "use strict";
  var live = document.getElementById("live");
  var state = document.getElementById("state");
  if (!live || !state || typeof EventSource !== "function") return;
  state.textContent = "live";
  state.className = "state live";
  var source = new EventSource("events");
  source.addEventListener("update", function (event) {
    live.innerHTML = event.data;
    state.textContent = "live";
    state.className = "state live";
  });
  source.addEventListener("error", function () {
    state.textContent = "reconnecting";
    state.className = "state stale";
    if (source.readyState === EventSource.CLOSED) {
      setTimeout(function () { location.reload(); }, 5000);
    }
  });
})();`;

export const DASHBOARD_STYLE = `
:root { color-scheme: light dark; --up: #2e8b57; --down: #c0392b; --unknown: #8a8a8a; --home: #2f6fb3; --ink: #222; --muted: #666; --line: #ddd; --bg: #fff; }
@media (prefers-color-scheme: dark) { :root { --ink: #e6e6e6; --muted: #9a9a9a; --line: #3a3a3a; --bg: #161616; } }
body { font: 14px/1.4 system-ui, sans-serif; margin: 0 auto; padding: 1rem 1.5rem; max-width: 72rem; color: var(--ink); background: var(--bg); }
header { display: flex; flex-wrap: wrap; gap: 1.5rem; align-items: baseline; border-bottom: 1px solid var(--line); padding-bottom: .5rem; }
header h1 { font-size: 1.3rem; margin: 0; }
.facts { display: flex; flex-wrap: wrap; gap: 1.5rem; margin: 0; }
.facts div { display: flex; flex-direction: column; }
.facts dt { color: var(--muted); font-size: .75rem; text-transform: uppercase; }
.facts dd { margin: 0; font-size: 1.2rem; font-variant-numeric: tabular-nums; }
section { margin-top: 1.2rem; }
h2 { font-size: 1rem; margin: 0 0 .4rem; }
table { border-collapse: collapse; font-variant-numeric: tabular-nums; }
th, td { text-align: left; padding: .2rem .8rem .2rem 0; border-bottom: 1px solid var(--line); vertical-align: middle; }
td.num, th.num { text-align: right; }
.grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(26rem, 1fr)); gap: 1rem 2rem; }
.state { font-size: .8rem; padding: .1rem .5rem; border-radius: .6rem; border: 1px solid var(--line); }
.state.live { color: var(--up); border-color: var(--up); }
.state.stale { color: var(--down); border-color: var(--down); }
.health-up { color: var(--up); } .health-down { color: var(--down); font-weight: 600; } .health-unknown { color: var(--unknown); }
.lease-held { color: var(--up); } .lease-lapsing { color: var(--unknown); font-weight: 600; } .lease-lapsed { color: var(--down); font-weight: 600; }
tr.this-proxy td:first-child { font-weight: 600; }
.alerts { list-style: none; padding: 0; margin: 0; }
.alerts li { border-left: 4px solid var(--down); padding: .3rem .6rem; margin-bottom: .3rem; }
.none { color: var(--muted); }
svg text { font: 12px system-ui, sans-serif; fill: var(--ink); }
.bar.up, .bar.home { fill: var(--up); } .bar.down { fill: var(--down); } .bar.unknown { fill: var(--unknown); }
.spark { fill: none; stroke: var(--home); stroke-width: 1.5; }
.map .link { stroke: var(--line); } .map .link.busy { stroke: var(--home); }
.map .link-rate { fill: var(--muted); font-size: 11px; }
.map .link-bytes { fill: var(--muted); font-size: 11px; }
.map .region-node rect { fill: var(--bg); stroke: var(--unknown); stroke-width: 2; }
.map .region-node.tone-up rect { stroke: var(--up); } .map .region-node.tone-down rect { stroke: var(--down); }
.map .region-node.home rect { stroke-dasharray: 6 3; }
.map .node-title { font-weight: 600; } .map .node-moving { fill: var(--home); font-weight: 600; }
.map .proxy-node rect { fill: var(--home); } .map .proxy-node text { fill: #fff; }
code.shape { font: 12px ui-monospace, monospace; white-space: pre-wrap; word-break: break-word; }
td.shape { max-width: 34rem; }
.slot-free { fill: var(--line); } .slot-busy { fill: var(--home); } .slot-idle { fill: var(--up); }
`;

function sha256Source(text: string): string {
  return `'sha256-${createHash("sha256").update(text, "utf8").digest("base64")}'`;
}

/** `'sha256-...'` of the inline script, exactly as the page carries it. */
export const DASHBOARD_SCRIPT_HASH = sha256Source(DASHBOARD_SCRIPT);
export const DASHBOARD_STYLE_HASH = sha256Source(DASHBOARD_STYLE);

/**
 * Sent on every response. Nothing may load from anywhere: the page's own script and style are
 * allowed by their hashes, the event stream by `connect-src 'self'`, and SVG is inline markup.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  `script-src ${DASHBOARD_SCRIPT_HASH}`,
  `style-src ${DASHBOARD_STYLE_HASH}`,
  "connect-src 'self'",
  "img-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");
