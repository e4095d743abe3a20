// Overview: cluster id, controller, brokers, topic and partition counts,
// under-replicated and offline partitions, disk use per log dir, and live
// produce/fetch rates sampled by the server from the broker's metrics.
"use strict";
(function () {
  const { h, api, table, lineChart, poll, fmtNumber, fmtBytes } = Console;

  function card(label, value, bad) {
    return h("div", { class: "card" + (bad ? " bad" : "") }, h("div", { class: "label" }, label), h("div", { class: "value" }, value));
  }

  function ratesCharts(rates) {
    const by = Object.fromEntries(rates.series.map((s) => [s.metric, s]));
    const pick = (...metrics) => metrics.map((m) => by[m]).filter(Boolean);
    const empty = "no samples yet (the broker's metrics are sampled every few seconds)";
    return [
      lineChart(pick("kafka_server_brokertopicmetrics_messagesin_total"), { title: "Messages in", unit: "/s", empty }),
      lineChart(pick("kafka_server_brokertopicmetrics_bytesin_total", "kafka_server_brokertopicmetrics_bytesout_total"), { title: "Bytes in / out", unit: "B/s", empty }),
      lineChart(pick("kafka_server_brokertopicmetrics_totalproducerequests_total", "kafka_server_brokertopicmetrics_totalfetchrequests_total"), { title: "Produce / fetch requests", unit: "/s", empty }),
    ];
  }

  function logDirRows(c) {
    const rows = [];
    for (const b of c.brokers) for (const d of b.logDirs) rows.push(d);
    return rows;
  }

  function pct(d) {
    if (!(d.totalBytes > 0) || !(d.usableBytes >= 0)) return "–";
    const used = (100 * (d.totalBytes - d.usableBytes)) / d.totalBytes;
    return h("span", { class: "badge " + (used > 85 ? "bad" : used > 70 ? "warn" : "ok") }, used.toFixed(1) + " %");
  }

  async function render(el) {
    const [c, rates] = await Promise.all([api("/api/cluster"), api("/api/rates")]);
    const charts = h("div", { class: "charts" }, ratesCharts(rates));
    el.append(
      h("h1", null, "Cluster ", h("code", null, c.clusterId || "")),
      h(
        "div",
        { class: "cards" },
        card("Brokers", fmtNumber(c.brokers.length)),
        card("Controller", c.controller >= 0 ? "broker " + c.controller : "none", c.controller < 0),
        card("Topics", fmtNumber(c.topics) + (c.internalTopics ? ` (+${c.internalTopics} internal)` : "")),
        card("Partitions", fmtNumber(c.partitions)),
        card("Under-replicated", fmtNumber(c.underReplicated), c.underReplicated > 0),
        card("Offline partitions", fmtNumber(c.offline), c.offline > 0)
      ),
      h("h2", null, "Throughput"),
      charts,
      h("h2", null, "Brokers"),
      table(
        [
          { key: "id", title: "ID", align: "right" },
          { key: "host", title: "Host", render: (b) => `${b.host}:${b.port}` },
          { key: "rack", title: "Rack", render: (b) => b.rack || "" },
          { key: "controller", title: "Controller", render: (b) => (b.controller ? h("span", { class: "badge ok" }, "controller") : "") },
          { key: "leaders", title: "Leaders", align: "right" },
          { key: "replicas", title: "Replicas", align: "right" },
          { key: "apis", title: "APIs", align: "right", render: (b) => (b.error ? h("span", { class: "badge bad", title: b.error }, "?") : fmtNumber(b.apis)) },
          { key: "features", title: "Features", render: (b) => (b.features || []).map((f) => `${f.name}=${f.level}`).join(", ") },
        ],
        c.brokers,
        { onRowClick: (b) => Console.navigate("#/brokers/" + b.id) }
      ),
      h("h2", null, "Disk use per log dir"),
      c.logDirsError
        ? h("div", { class: "error-box" }, "Log dirs: " + c.logDirsError)
        : table(
            [
              { key: "broker", title: "Broker", align: "right" },
              { key: "dir", title: "Log dir", render: (d) => h("code", null, d.dir) },
              { key: "size", title: "Data", align: "right", render: (d) => fmtBytes(d.size) },
              { key: "partitions", title: "Partitions", align: "right" },
              { key: "totalBytes", title: "Volume size", align: "right", render: (d) => fmtBytes(d.totalBytes) },
              { key: "usableBytes", title: "Usable", align: "right", render: (d) => fmtBytes(d.usableBytes) },
              { key: "used", title: "Volume used", align: "right", render: pct },
              { key: "error", title: "Error", render: (d) => (d.error ? h("span", { class: "badge bad" }, d.error) : "") },
            ],
            logDirRows(c),
            { sortable: true }
          )
    );
    poll(el, 5000, async () => {
      const r = await api("/api/rates");
      charts.replaceChildren(...ratesCharts(r));
    });
  }

  Console.page("overview", { title: "Overview", order: 10, render });
})();
