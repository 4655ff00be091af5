/**
 * Charts (lightweight-charts by TradingView, Apache-2.0: the footer of every portal page carries its
 * attribution notice and the link to https://www.tradingview.com/ that its license asks for). A pair's OHLCV candles
 * with volume, and a series instance's points, at a chosen scale; zoom with the wheel or the buttons,
 * and older data is paged in through the routes' own window parameters (`page` for candles, `until_ts`
 * for series) when the view reaches the oldest point loaded, or with "Older".
 */
import {
  CandlestickSeries,
  createChart,
  HistogramSeries,
  type IChartApi,
  LineSeries,
  type UTCTimestamp,
} from "lightweight-charts";
import { call } from "./api.ts";
import { h, notice } from "./ui.ts";

export const PRICE_SCALES = ["1m", "3m", "5m", "15m", "1h", "4h", "1d", "1w"];

interface Candle {
  t: number;
  o: number;
  h: number;
  l: number;
  c: number;
  v: number;
}

function baseChart(el: HTMLElement): IChartApi {
  return createChart(el, {
    autoSize: true,
    // The TradingView attribution (NOTICE and link) is the footer of every portal page: the chart's own logo
    // injects a <style> element, which the pages' Content-Security-Policy (style-src 'self') refuses.
    layout: { attributionLogo: false, background: { color: "#ffffff" }, textColor: "#1b1f24" },
    timeScale: { timeVisible: true, secondsVisible: false },
    grid: { vertLines: { color: "#f0f2f5" }, horzLines: { color: "#f0f2f5" } },
  });
}

const sec = (ms: number) => Math.floor(ms / 1000) as UTCTimestamp;

function zoomButtons(chart: IChartApi, older: () => void): HTMLElement[] {
  const zoom = (factor: number) => {
    const range = chart.timeScale().getVisibleLogicalRange();
    if (!range) return;
    const mid = (range.from + range.to) / 2;
    const half = ((range.to - range.from) / 2) * factor;
    chart.timeScale().setVisibleLogicalRange({ from: mid - half, to: mid + half });
  };
  return [
    h("button", { type: "button", onclick: () => zoom(0.5), "data-testid": "zoom-in" }, "Zoom in"),
    h("button", { type: "button", onclick: () => zoom(2), "data-testid": "zoom-out" }, "Zoom out"),
    h("button", { type: "button", onclick: () => chart.timeScale().fitContent() }, "Fit"),
    h("button", { type: "button", onclick: older, "data-testid": "older" }, "Older"),
  ];
}

/** Loads older data when the view's left edge comes within a few bars of the oldest loaded. */
function pageOnScroll(chart: IChartApi, more: () => Promise<void>): void {
  let busy = false;
  chart.timeScale().subscribeVisibleLogicalRangeChange((range) => {
    if (!range || range.from > 5 || busy) return;
    busy = true;
    more().finally(() => {
      busy = false;
    });
  });
}

/** A pair's candles with volume below; returns a cleanup. */
export function pairChart(root: HTMLElement, pairId: number, label: string): () => void {
  const scale = h(
    "select",
    { "data-testid": "scale" },
    ...PRICE_SCALES.map((s) => h("option", { value: s }, s)),
  );
  scale.value = "5m";
  const info = h("span", { class: "muted", "data-testid": "chart-info" });
  const box = h("div", { class: "chart", "data-testid": "candles-chart" });
  const errors = h("div");
  let chart: IChartApi | null = null;
  let page = 0;
  let done = false;
  let candles: Candle[] = [];
  const older = async () => {
    if (done || !chart) return;
    const answer = await call<{ ohlcv: Candle[] }>(
      "GET",
      `price/pair/${pairId}/ohlcv?scale=${scale.value}&page=${page}&pageSize=200`,
    );
    page += 1;
    if (answer.ohlcv.length < 200) done = true;
    const seen = new Set(candles.map((c) => c.t));
    candles = [...answer.ohlcv.filter((c) => !seen.has(c.t)), ...candles].sort((a, b) => a.t - b.t);
    draw();
  };
  let priceSeries: ReturnType<IChartApi["addSeries"]> | null = null;
  let volumeSeries: ReturnType<IChartApi["addSeries"]> | null = null;
  const draw = () => {
    // Token prices run from 1e-12 to 1e6: enough decimals for the smallest price loaded.
    const lows = candles.map((c) => c.l).filter((v) => v > 0);
    const smallest = lows.length ? Math.min(...lows) : 1;
    const precision = Math.min(14, Math.max(2, Math.ceil(-Math.log10(smallest)) + 4));
    priceSeries?.applyOptions({ priceFormat: { type: "price", precision, minMove: 10 ** -precision } });
    priceSeries?.setData(
      candles.map((c) => ({ time: sec(c.t), open: c.o, high: c.h, low: c.l, close: c.c })),
    );
    volumeSeries?.setData(
      candles.map((c) => ({ time: sec(c.t), value: c.v, color: c.c >= c.o ? "#26a69a88" : "#ef535088" })),
    );
    info.textContent = `${label}: ${candles.length} candles at ${scale.value}${done ? " (all loaded)" : ""}`;
    box.dataset.candles = String(candles.length);
    box.dataset.scale = scale.value;
  };
  const load = async () => {
    chart?.remove();
    errors.replaceChildren();
    chart = baseChart(box);
    priceSeries = chart.addSeries(CandlestickSeries, {});
    volumeSeries = chart.addSeries(HistogramSeries, { priceScaleId: "", priceFormat: { type: "volume" } });
    volumeSeries.priceScale().applyOptions({ scaleMargins: { top: 0.8, bottom: 0 } });
    priceSeries.priceScale().applyOptions({ scaleMargins: { top: 0.05, bottom: 0.25 } });
    page = 0;
    done = false;
    candles = [];
    box.dataset.candles = "";
    try {
      await older();
      chart.timeScale().fitContent();
      pageOnScroll(chart, older);
    } catch (error) {
      errors.append(notice("error", (error as Error).message));
    }
  };
  scale.addEventListener("change", () => void load());
  const toolbar = h("div", { class: "toolbar" }, h("strong", {}, label), "Scale", scale);
  root.append(toolbar, box, errors);
  const ready = load().then(() => {
    if (chart) toolbar.append(...zoomButtons(chart, () => void older()), info);
  });
  void ready;
  return () => chart?.remove();
}

interface Point {
  t: number;
  y?: number;
  values?: Record<string, number>;
}

/** A series instance's chart at a scale, one line per chosen key; returns a cleanup. */
export function seriesChart(root: HTMLElement, instanceId: string, scales: string[]): () => void {
  const scale = h(
    "select",
    { "data-testid": "series-scale" },
    ...scales.map((s) => h("option", { value: s }, s === "0" ? "0 (raw)" : s)),
  );
  const keySelect = h("select", { "data-testid": "series-key" });
  const info = h("span", { class: "muted" });
  const box = h("div", { class: "chart", "data-testid": "series-chart" });
  const errors = h("div");
  let chart: IChartApi | null = null;
  let line: ReturnType<IChartApi["addSeries"]> | null = null;
  let points: Point[] = [];
  let done = false;
  const pointValue = (p: Point) => p.y ?? p.values?.[keySelect.value];
  const draw = () => {
    const data = points
      .filter((p) => typeof pointValue(p) === "number")
      .map((p) => ({ time: sec(p.t), value: pointValue(p) as number }));
    // Points closer than a second (raw scale) share a time on the chart: keep the last.
    const byTime = new Map(data.map((d) => [d.time, d]));
    line?.setData([...byTime.values()]);
    box.dataset.points = String(byTime.size);
    info.textContent = `${byTime.size} points at ${scale.value === "0" ? "raw" : scale.value}${done ? " (all loaded)" : ""}`;
  };
  const fetchPoints = async (untilTs?: number) => {
    const q = new URLSearchParams({ limit: "500" });
    if (untilTs !== undefined) q.set("until_ts", String(untilTs));
    return call<{ points: Point[] }>("GET", `series/instances/${instanceId}/${scale.value}/chart?${q}`);
  };
  const older = async () => {
    if (done || !chart || points.length === 0) return;
    const oldest = Math.min(...points.map((p) => p.t));
    const answer = await fetchPoints(oldest - 1);
    if (answer.points.length === 0) done = true;
    points = [...answer.points, ...points].sort((a, b) => a.t - b.t);
    draw();
  };
  const load = async () => {
    chart?.remove();
    errors.replaceChildren();
    chart = baseChart(box);
    line = chart.addSeries(LineSeries, { color: "#0b5cad", lineWidth: 2 });
    done = false;
    try {
      points = (await fetchPoints()).points.sort((a, b) => a.t - b.t);
      const keys = [...new Set(points.flatMap((p) => Object.keys(p.values ?? {})))];
      const previous = keySelect.value;
      keySelect.replaceChildren(...keys.map((k) => h("option", { value: k }, k)));
      if (keys.includes(previous)) keySelect.value = previous;
      draw();
      chart.timeScale().fitContent();
      pageOnScroll(chart, older);
    } catch (error) {
      errors.append(notice("error", (error as Error).message));
    }
  };
  scale.addEventListener("change", () => void load());
  keySelect.addEventListener("change", draw);
  const toolbar = h("div", { class: "toolbar" }, "Scale", scale, "Key", keySelect);
  root.append(toolbar, box, errors);
  void load().then(() => {
    if (chart) toolbar.append(...zoomButtons(chart, () => void older()), info);
  });
  return () => chart?.remove();
}
