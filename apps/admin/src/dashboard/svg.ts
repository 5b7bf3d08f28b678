import { escapeHtml } from "./escape.js";

/**
 * A sparkline: one polyline over `values`, scaled to the largest (or `floor`, so a quiet series stays
 * flat at the bottom instead of filling the box). Plain SVG, no script, drawn on the server.
 */
export function sparkline(
  values: readonly number[],
  label: string,
  width = 120,
  height = 24,
  floor = 1,
): string {
  const top = Math.max(floor, ...values);
  const step = values.length > 1 ? width / (values.length - 1) : 0;
  const points = values
    .map((value, i) => `${round(i * step)},${round(height - 1 - (value / top) * (height - 2))}`)
    .join(" ");
  const line = values.length > 1 ? `<polyline class="spark" points="${points}"/>` : "";
  return `<svg class="sparkline" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" role="img" aria-label="${escapeHtml(label)}">${line}</svg>`;
}

export interface Bar {
  readonly label: string;
  readonly value: number;
  /** Text drawn after the bar. */
  readonly text: string;
  /** A class for the bar's colour: `up`, `down`, `unknown`, `home`. */
  readonly tone: string;
}

/** Horizontal bars, one row each, scaled to the largest value. */
export function barChart(bars: readonly Bar[], label: string, width = 420): string {
  const row = 22;
  const labelWidth = 110;
  const textWidth = 110;
  const span = width - labelWidth - textWidth;
  const top = Math.max(1, ...bars.map((bar) => bar.value));
  const height = Math.max(row, bars.length * row);
  const rows = bars
    .map((bar, i) => {
      const y = i * row;
      const length = Math.max(bar.value > 0 ? 2 : 0, round((bar.value / top) * span));
      return (
        `<text class="bar-label" x="0" y="${y + 15}">${escapeHtml(bar.label)}</text>` +
        `<rect class="bar ${escapeHtml(bar.tone)}" x="${labelWidth}" y="${y + 4}" width="${length}" height="${row - 8}" rx="2"/>` +
        `<text class="bar-text" x="${labelWidth + length + 6}" y="${y + 15}">${escapeHtml(bar.text)}</text>`
      );
    })
    .join("");
  return `<svg class="bars" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" role="img" aria-label="${escapeHtml(label)}">${rows}</svg>`;
}

/** One pool as a stacked bar: busy, then idle, out of its maximum. */
export function occupancyBar(busy: number, idle: number, max: number, label: string, width = 160): string {
  const total = Math.max(1, max, busy + idle);
  const busyWidth = round((busy / total) * width);
  const idleWidth = round((idle / total) * width);
  return (
    `<svg class="occupancy" viewBox="0 0 ${width} 12" width="${width}" height="12" role="img" aria-label="${escapeHtml(label)}">` +
    `<rect class="slot-free" x="0" y="0" width="${width}" height="12" rx="2"/>` +
    `<rect class="slot-busy" x="0" y="0" width="${busyWidth}" height="12"/>` +
    `<rect class="slot-idle" x="${busyWidth}" y="0" width="${idleWidth}" height="12"/>` +
    `</svg>`
  );
}

/** One region on the placement map. */
export interface MapNode {
  readonly id: string;
  readonly home: boolean;
  /** `up`, `down` or `unknown`: the primary's health, drawn as the node's outline. */
  readonly tone: string;
  readonly keys: number;
  readonly rowsIn: number;
  readonly rowsOut: number;
  /** Statements per second between the proxy and this region (recent). */
  readonly rate: number;
  /** Bytes per second from this region's servers to the proxy, and from the proxy to them (recent). */
  readonly bytesInRate: number;
  readonly bytesOutRate: number;
  /** Keys being moved into this region now. */
  readonly movingIn: number;
}

/**
 * The placement map: the proxy at the top, one node per region below it, and a link from the proxy
 * to each whose width follows its recent statements per second, labelled with them and with the
 * bytes per second each way. Drawn on the server as plain SVG.
 */
export function placementMap(nodes: readonly MapNode[], label: string): string {
  const nodeWidth = 170;
  const gap = 24;
  const width = Math.max(360, nodes.length * (nodeWidth + gap) + gap);
  const height = 210;
  const proxyX = width / 2;
  const proxyY = 28;
  const top = Math.max(1, ...nodes.map((node) => node.rate));
  const parts: string[] = [];
  nodes.forEach((node, i) => {
    const x = gap + i * (nodeWidth + gap);
    const cx = x + nodeWidth / 2;
    const y = 120;
    const stroke = round(1 + (node.rate / top) * 7);
    parts.push(
      `<line class="link${node.rate > 0 ? " busy" : ""}" x1="${round(proxyX)}" y1="${proxyY + 18}" x2="${round(cx)}" y2="${y - 40}" stroke-width="${node.rate > 0 ? stroke : 1}"/>` +
        `<text class="link-rate" x="${round(cx)}" y="${y - 26}" text-anchor="middle">${escapeHtml(formatRate(node.rate))}</text>` +
        `<text class="link-bytes" data-region="${escapeHtml(node.id)}" data-bytes-in="${Math.round(node.bytesInRate)}" data-bytes-out="${Math.round(node.bytesOutRate)}" x="${round(cx)}" y="${y - 10}" text-anchor="middle">` +
        `${escapeHtml(`↓ ${formatBytes(node.bytesInRate)} ↑ ${formatBytes(node.bytesOutRate)}`)}</text>`,
    );
    const lines = [
      `${node.keys.toLocaleString("en-US")} keys`,
      `rows in ${node.rowsIn.toLocaleString("en-US")}, out ${node.rowsOut.toLocaleString("en-US")}`,
      node.movingIn > 0 ? `moving in: ${node.movingIn} key${node.movingIn === 1 ? "" : "s"}` : "",
    ];
    parts.push(
      `<g class="region-node tone-${escapeHtml(node.tone)}${node.home ? " home" : ""}" data-region="${escapeHtml(node.id)}">` +
        `<rect x="${x}" y="${y}" width="${nodeWidth}" height="78" rx="6"/>` +
        `<text class="node-title" x="${x + 10}" y="${y + 18}">${escapeHtml(node.id)}${node.home ? " (home)" : ""}</text>` +
        lines
          .filter((line) => line !== "")
          .map(
            (line, n) =>
              `<text class="${n === 2 ? "node-moving" : "node-line"}" x="${x + 10}" y="${y + 38 + n * 16}">${escapeHtml(line)}</text>`,
          )
          .join("") +
        `</g>`,
    );
  });
  parts.push(
    `<g class="proxy-node"><rect x="${round(proxyX - 50)}" y="${proxyY - 14}" width="100" height="32" rx="6"/>` +
      `<text x="${round(proxyX)}" y="${proxyY + 6}" text-anchor="middle">geoproxy</text></g>`,
  );
  return `<svg id="placement-map" class="map" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" role="img" aria-label="${escapeHtml(label)}">${parts.join("")}</svg>`;
}

/** Bytes per second in B, kB, MB (powers of 1000, as network rates are given). */
function formatBytes(rate: number): string {
  if (rate < 1000) return `${Math.round(rate)} B/s`;
  if (rate < 1_000_000) return `${(rate / 1000).toFixed(1)} kB/s`;
  return `${(rate / 1_000_000).toFixed(1)} MB/s`;
}

function formatRate(rate: number): string {
  return `${rate < 10 ? rate.toFixed(1) : Math.round(rate).toString()} stmt/s`;
}

function round(value: number): number {
  return Math.round(value * 10) / 10;
}
