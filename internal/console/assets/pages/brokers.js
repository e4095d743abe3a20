// Brokers: each broker with its host, rack, leaders, replicas and log
// dirs; #/brokers/<id> shows a broker's configs with their sources.
"use strict";
(function () {
  const { h, api, table, fmtNumber, fmtBytes } = Console;

  async function renderList(el) {
    const c = await api("/api/brokers");
    el.append(
      h("h1", null, "Brokers"),
      table(
        [
          { key: "id", title: "ID", align: "right" },
          { key: "host", title: "Host", render: (b) => `${b.host}:${b.port}` },
          { key: "rack", title: "Rack", render: (b) => b.rack || "" },
          { key: "controller", title: "Role", render: (b) => (b.controller ? h("span", { class: "badge ok" }, "controller") : "broker") },
          { key: "leaders", title: "Leaders", align: "right" },
          { key: "replicas", title: "Replicas", align: "right" },
          { key: "size", title: "Data", align: "right", sort: (b) => b.logDirs.reduce((a, d) => a + d.size, 0), render: (b) => fmtBytes(b.logDirs.reduce((a, d) => a + d.size, 0)) },
          { key: "dirs", title: "Log dirs", render: (b) => b.logDirs.map((d) => h("div", null, h("code", null, d.dir), d.error ? h("span", { class: "badge bad" }, d.error) : "")) },
        ],
        c.brokers,
        { sortable: true, onRowClick: (b) => Console.navigate("#/brokers/" + b.id) }
      ),
      c.logDirsError ? h("div", { class: "error-box" }, "Log dirs: " + c.logDirsError) : null
    );
  }

  async function renderBroker(el, id) {
    const r = await api(`/api/brokers/${encodeURIComponent(id)}/configs`);
    const search = h("input", { type: "search", placeholder: "filter configs", class: "config-filter" });
    const holder = h("div");
    const draw = () => {
      const q = search.value.toLowerCase();
      holder.replaceChildren(
        table(
          [
            { key: "name", title: "Name", render: (c) => h("code", null, c.name) },
            { key: "value", title: "Value", render: (c) => (c.sensitive ? h("span", { class: "muted" }, "(sensitive)") : h("code", null, c.value ?? "null")) },
            { key: "source", title: "Source", render: (c) => h("span", { class: "badge" + (c.source === "DEFAULT_CONFIG" ? "" : " ok") }, c.source) },
          ],
          r.configs.filter((c) => !q || c.name.includes(q)),
          { sortable: true }
        )
      );
    };
    search.addEventListener("input", draw);
    draw();
    el.append(h("h1", null, h("a", { href: "#/brokers" }, "Brokers"), " / broker ", id), h("div", { class: "toolbar" }, search, h("span", { class: "muted" }, fmtNumber(r.configs.length) + " configs")), holder);
  }

  Console.page("brokers", {
    title: "Brokers",
    order: 20,
    render: (el, params) => (params.length ? renderBroker(el, params[0]) : renderList(el)),
  });
})();
