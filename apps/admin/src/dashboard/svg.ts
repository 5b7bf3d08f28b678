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

function round(value: number): number {
  return Math.round(value * 10) / 10;
}
