// A small SVG chart generator for docs/bench/: horizontal bars (throughput per setup) and latency
// percentile curves (a log-scaled latency axis over p0 … p100). Plain strings, no dependencies.
import type { BarChart, LatencyChart } from './report.js';

const FONT = 'font-family="system-ui, -apple-system, Segoe UI, Helvetica, Arial, sans-serif"';
const PALETTE = ['#d9480f', '#1c7ed6', '#2f9e44', '#7048e8', '#e8590c', '#0b7285', '#c2255c', '#5c940d'];
const PARLEY = '#d9480f';
const OTHER = '#868e96';

export function escapeXml(text: string): string {
  return text.replace(/[<>&"']/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&apos;' })[c]!);
}

/** Round tick steps: 1, 2, 5 × 10^n, about `count` of them up to max. */
export function niceTicks(max: number, count = 5): number[] {
  if (!(max > 0)) return [0];
  const raw = max / count;
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * magnitude).find((s) => s >= raw)!;
  const ticks: number[] = [];
  for (let v = 0; v <= max * 1.0001 + step; v += step) {
    ticks.push(Number(v.toPrecision(12)));
    if (v >= max) break;
  }
  return ticks;
}

/** Compact tick label: 150000 → 150k, 0.5 → 0.5. */
export function shortNumber(v: number): string {
  if (v >= 1e6) return `${Number((v / 1e6).toPrecision(3))}M`;
  if (v >= 1e3) return `${Number((v / 1e3).toPrecision(3))}k`;
  return `${Number(v.toPrecision(3))}`;
}

export function barChartSvg(chart: BarChart): string {
  const labelWidth = 230;
  const plotWidth = 440;
  const valueWidth = 110;
  const barHeight = 26;
  const gap = 12;
  const top = 44;
  const width = labelWidth + plotWidth + valueWidth;
  const height = top + chart.bars.length * (barHeight + gap) + 36;
  const max = Math.max(...chart.bars.map((b) => b.value).filter(Number.isFinite), 1);
  const ticks = niceTicks(max);
  const scaleMax = ticks.at(-1)!;
  const x = (v: number) => labelWidth + (v / scaleMax) * plotWidth;
  const parts: string[] = [];
  parts.push(`<text x="12" y="24" font-size="15" font-weight="600">${escapeXml(chart.title)}</text>`);
  const axisY = top + chart.bars.length * (barHeight + gap);
  for (const t of ticks) {
    parts.push(`<line x1="${x(t)}" y1="${top - 6}" x2="${x(t)}" y2="${axisY}" stroke="#e9ecef"/>`);
    parts.push(`<text x="${x(t)}" y="${axisY + 16}" font-size="11" fill="#495057" text-anchor="middle">${shortNumber(t)}</text>`);
  }
  parts.push(`<text x="${labelWidth + plotWidth / 2}" y="${axisY + 32}" font-size="11" fill="#495057" text-anchor="middle">${escapeXml(chart.unit)}</text>`);
  chart.bars.forEach((bar, i) => {
    const y = top + i * (barHeight + gap);
    const value = Number.isFinite(bar.value) ? bar.value : 0;
    parts.push(`<text x="${labelWidth - 10}" y="${y + barHeight / 2 + 4}" font-size="12" text-anchor="end">${escapeXml(bar.label)}</text>`);
    parts.push(`<rect x="${labelWidth}" y="${y}" width="${Math.max(1, x(value) - labelWidth).toFixed(1)}" height="${barHeight}" fill="${bar.highlight ? PARLEY : OTHER}" rx="2"/>`);
    parts.push(`<text x="${(x(value) + 6).toFixed(1)}" y="${y + barHeight / 2 + 4}" font-size="12" fill="#212529">${Number.isFinite(bar.value) ? Math.round(bar.value).toLocaleString('en-US') : 'n/a'}</text>`);
  });
  return wrap(width, height, parts);
}

export function latencyChartSvg(chart: LatencyChart): string {
  const left = 64;
  const right = 190;
  const top = 44;
  const plotWidth = 560;
  const plotHeight = 280;
  const width = left + plotWidth + right;
  const height = top + plotHeight + 50;
  const values = chart.series.flatMap((s) => s.curve.map(([, v]) => v)).filter((v) => Number.isFinite(v) && v > 0);
  const marks = chart.target ? [...values, chart.target.value] : values;
  const lo = Math.max(0.01, Math.min(...marks));
  const hi = Math.max(...marks);
  const decadeLo = Math.floor(Math.log10(lo));
  const decadeHi = Math.max(decadeLo + 1, Math.ceil(Math.log10(hi)));
  const y = (v: number) => top + plotHeight - ((Math.log10(Math.max(v, 10 ** decadeLo)) - decadeLo) / (decadeHi - decadeLo)) * plotHeight;
  const percentiles = chart.series[0]?.curve.map(([p]) => p) ?? [];
  const x = (i: number) => left + (percentiles.length <= 1 ? 0 : (i / (percentiles.length - 1)) * plotWidth);
  const parts: string[] = [];
  parts.push(`<text x="12" y="24" font-size="15" font-weight="600">${escapeXml(chart.title)}</text>`);
  for (let d = decadeLo; d <= decadeHi; d++) {
    for (const m of [1, 2, 5]) {
      const v = m * 10 ** d;
      if (v < 10 ** decadeLo || v > 10 ** decadeHi) continue;
      parts.push(`<line x1="${left}" y1="${y(v).toFixed(1)}" x2="${left + plotWidth}" y2="${y(v).toFixed(1)}" stroke="${m === 1 ? '#dee2e6' : '#f1f3f5'}"/>`);
      parts.push(`<text x="${left - 8}" y="${(y(v) + 4).toFixed(1)}" font-size="11" fill="#495057" text-anchor="end">${shortNumber(v)}</text>`);
    }
  }
  parts.push(`<text x="16" y="${top + plotHeight / 2}" font-size="11" fill="#495057" transform="rotate(-90 16 ${top + plotHeight / 2})" text-anchor="middle">latency, ms (log scale)</text>`);
  percentiles.forEach((p, i) => {
    parts.push(`<line x1="${x(i)}" y1="${top}" x2="${x(i)}" y2="${top + plotHeight}" stroke="#f1f3f5"/>`);
    parts.push(`<text x="${x(i)}" y="${top + plotHeight + 16}" font-size="11" fill="#495057" text-anchor="middle">${p === 0 ? 'min' : p === 100 ? 'max' : `p${p}`}</text>`);
  });
  parts.push(`<text x="${left + plotWidth / 2}" y="${top + plotHeight + 36}" font-size="11" fill="#495057" text-anchor="middle">percentile</text>`);
  chart.series.forEach((series, i) => {
    const color = PALETTE[i % PALETTE.length]!;
    const points = series.curve.map(([, v], j) => `${x(j).toFixed(1)},${y(v).toFixed(1)}`).join(' ');
    parts.push(`<polyline points="${points}" fill="none" stroke="${color}" stroke-width="2"/>`);
    for (const [j, [, v]] of series.curve.entries()) parts.push(`<circle cx="${x(j).toFixed(1)}" cy="${y(v).toFixed(1)}" r="2.5" fill="${color}"/>`);
    const ly = top + 8 + i * 20;
    parts.push(`<rect x="${left + plotWidth + 16}" y="${ly - 8}" width="14" height="3" fill="${color}"/>`);
    parts.push(`<text x="${left + plotWidth + 36}" y="${ly - 2}" font-size="11">${escapeXml(series.label)}</text>`);
  });
  if (chart.target) {
    const ty = y(chart.target.value).toFixed(1);
    parts.push(`<line x1="${left}" y1="${ty}" x2="${left + plotWidth}" y2="${ty}" stroke="#c92a2a" stroke-dasharray="6 4"/>`);
    parts.push(`<text x="${left + plotWidth - 6}" y="${Number(ty) + 15}" font-size="11" fill="#c92a2a" text-anchor="end">${escapeXml(chart.target.label)}</text>`);
  }
  parts.push(`<rect x="${left}" y="${top}" width="${plotWidth}" height="${plotHeight}" fill="none" stroke="#adb5bd"/>`);
  return wrap(width, height, parts);
}

function wrap(width: number, height: number, parts: string[]): string {
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" ${FONT}>`,
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
    ...parts,
    '</svg>',
    '',
  ].join('\n');
}
