// Groups: the list of classic, consumer (KIP-848) and share groups with
// their total lag, and a group's page (members, per-partition lag as
// `silkworm consumer-groups --describe` prints it, a lag chart sampled while
// the page is open, reset offsets, delete). API: internal/console/groups.go.
(function () {
  "use strict";
  const h = Console.h;
  const PAGE_SIZE = 50;
  const POLL_MS = 3000;
  const CHART_POINTS = 120; // six minutes at one point every 3 s

  const enc = encodeURIComponent;
  const num = (v) => (v === null || v === undefined || v < 0 ? "-" : String(v));

  const errorBox = (err) => Console.errorBox(err);

  // ---------- list ----------

  async function renderList(el) {
    const state = { q: "", type: "", page: 0 };
    const search = h("input", { type: "search", placeholder: "Search groups", "data-test": "group-search" });
    const typeSel = h("select", { "data-test": "group-type" },
      h("option", { value: "" }, "all types"),
      h("option", { value: "classic" }, "classic"),
      h("option", { value: "consumer" }, "consumer"),
      h("option", { value: "share" }, "share"));
    const body = h("div", { class: "groups-list" });
    const pager = h("div", {});
    el.append(
      h("h1", {}, "Groups"),
      h("div", { class: "toolbar" }, search, " ", typeSel),
      body, pager);

    async function load() {
      const qs = `?q=${enc(state.q)}&type=${enc(state.type)}&offset=${state.page * PAGE_SIZE}&limit=${PAGE_SIZE}`;
      let res;
      try {
        res = await Console.api("/api/groups" + qs);
      } catch (err) {
        body.replaceChildren(errorBox(err));
        pager.replaceChildren();
        return;
      }
      const cols = [
        { key: "group", title: "Group", render: (g) => h("a", { href: "#/groups/" + enc(g.group) }, g.group) },
        { key: "type", title: "Type" },
        { key: "state", title: "State" },
        { key: "protocol", title: "Protocol" },
        { key: "members", title: "Members", align: "right", render: (g) => num(g.members) },
        { key: "coordinator", title: "Coordinator", align: "right", render: (g) => num(g.coordinator) },
        { key: "lag", title: "Total lag", align: "right", render: (g) => (g.error ? h("span", { class: "badge bad", title: g.error }, "error") : num(g.lag)) },
      ];
      body.replaceChildren(res.groups.length === 0
        ? h("p", { class: "muted" }, state.q || state.type ? "No group matches." : "No groups.")
        : Console.table(cols, res.groups, { sortable: true, onRowClick: (g) => Console.navigate("#/groups/" + enc(g.group)) }));
      pager.replaceChildren(res.total > PAGE_SIZE
        ? Console.pager(res.total, state.page * PAGE_SIZE, PAGE_SIZE, (off) => { state.page = Math.floor(off / PAGE_SIZE); load(); })
        : "");
    }

    let timer = null;
    search.addEventListener("input", () => {
      clearTimeout(timer);
      timer = setTimeout(() => { state.q = search.value.trim(); state.page = 0; load(); }, 250);
    });
    typeSel.addEventListener("change", () => { state.type = typeSel.value; state.page = 0; load(); });
    await load();
  }

  // ---------- one group ----------

  function assignmentText(as) {
    if (!as || as.length === 0) return "-";
    return as.map((a) => `${a.topic}: ${a.partitions.join(",")}`).join("; ");
  }

  function summary(g) {
    const coord = g.coordinator ? `${g.coordinator.id} (${g.coordinator.host}:${g.coordinator.port})` : "-";
    const items = [
      ["Type", g.type], ["State", g.state], ["Protocol", g.protocol || "-"],
      ["Coordinator", coord], ["Members", String(g.members.length)], ["Total lag", num(g.totalLag)],
    ];
    if (g.type === "consumer") items.push(["Group epoch", String(g.epoch)], ["Assignment epoch", String(g.assignmentEpoch)]);
    return h("div", { class: "cards", "data-test": "group-summary" },
      ...items.map(([k, v]) => h("div", { class: "card" }, h("div", { class: "label" }, k), h("div", { class: "value", "data-field": k }, v))));
  }

  function membersTable(g) {
    if (g.members.length === 0) return h("p", { class: "muted" }, "No active members.");
    return Console.table([
      { key: "memberId", title: "Member" },
      { key: "instanceId", title: "Instance", render: (m) => m.instanceId || "-" },
      { key: "clientId", title: "Client id" },
      { key: "host", title: "Host" },
      { key: "assignments", title: "Assignment", render: (m) => assignmentText(m.assignments) },
    ], g.members, { sortable: true });
  }

  function offsetsTable(g) {
    if (g.offsets.length === 0) return h("p", { class: "muted" }, "No committed offsets.");
    return Console.table([
      { key: "topic", title: "Topic", render: (o) => h("a", { href: "#/topics/" + enc(o.topic) }, o.topic) },
      { key: "partition", title: "Partition", align: "right" },
      { key: "committed", title: "Committed offset", align: "right", render: (o) => num(o.committed) },
      { key: "logEnd", title: "Log end offset", align: "right", render: (o) => num(o.logEnd) },
      { key: "lag", title: "Lag", align: "right", render: (o) => h("span", { "data-lag": `${o.topic}/${o.partition}` }, num(o.lag)) },
      { key: "memberId", title: "Member", render: (o) => o.memberId || "-" },
      { key: "clientId", title: "Client id", render: (o) => o.clientId || "-" },
      { key: "host", title: "Host", render: (o) => o.host || "-" },
    ], g.offsets, { sortable: true, pageSize: 100 });
  }

  function resetForm(g, onDone) {
    const topics = [...new Set(g.offsets.map((o) => o.topic))].sort();
    const scope = h("select", { name: "topic", "data-test": "reset-topic" },
      h("option", { value: "" }, "all topics with committed offsets"),
      ...topics.map((t) => h("option", { value: t }, t)));
    const to = h("select", { name: "to", "data-test": "reset-to" },
      h("option", { value: "earliest" }, "earliest"),
      h("option", { value: "latest" }, "latest"),
      h("option", { value: "timestamp" }, "timestamp"),
      h("option", { value: "offset" }, "offset"));
    const ts = h("input", { type: "datetime-local", step: "1", "data-test": "reset-timestamp", style: "display:none" });
    const off = h("input", { type: "number", min: "0", placeholder: "offset", "data-test": "reset-offset", style: "display:none" });
    to.addEventListener("change", () => {
      ts.style.display = to.value === "timestamp" ? "" : "none";
      off.style.display = to.value === "offset" ? "" : "none";
    });
    const preview = h("div", { class: "reset-preview", "data-test": "reset-preview" });
    const execute = h("button", { class: "danger", "data-test": "reset-execute", style: "display:none" }, "Execute reset");
    let planned = null;

    function request(exec) {
      const body = { to: to.value, topic: scope.value, execute: exec };
      if (to.value === "timestamp") {
        const t = ts.value ? new Date(ts.value).getTime() : NaN;
        if (isNaN(t)) throw new Error("choose a date and time");
        body.timestamp = t;
      }
      if (to.value === "offset") {
        if (off.value === "") throw new Error("enter an offset");
        body.offset = Number(off.value);
      }
      return body;
    }

    async function run(exec) {
      let body;
      try {
        body = request(exec);
      } catch (err) {
        Console.toast(err.message, "error");
        return;
      }
      try {
        const res = await Console.api(`/api/groups/${enc(g.group)}/reset-offsets`, { method: "POST", body });
        planned = body;
        const rows = res.rows || [];
        preview.replaceChildren(
          h("p", {}, exec ? `Committed ${rows.length} offsets.` : `Preview (dry run): ${rows.length} partitions.`),
          rows.length ? Console.table([
            { key: "topic", title: "Topic" },
            { key: "partition", title: "Partition", align: "right" },
            { key: "current", title: "Current offset", align: "right", render: (r) => num(r.current) },
            { key: "newOffset", title: "New offset", align: "right" },
          ], rows, { sortable: true }) : "");
        execute.style.display = exec || rows.length === 0 ? "none" : "";
        if (exec) {
          Console.toast(`Offsets of ${g.group} reset`, "ok");
          onDone();
        }
      } catch (err) {
        preview.replaceChildren(errorBox(err));
        execute.style.display = "none";
        Console.toast(err.message, "error");
      }
    }

    const dry = h("button", { "data-test": "reset-preview-button", onclick: () => run(false) }, "Preview");
    execute.addEventListener("click", async () => {
      if (!planned) return;
      const ok = await Console.confirm(`Commit the previewed offsets for group ${g.group}?`, { confirmText: "Reset offsets", danger: true });
      if (ok) run(true);
    });
    for (const c of [scope, to, ts, off]) c.addEventListener("change", () => { execute.style.display = "none"; planned = null; });
    const note = h("p", { class: "muted", "data-test": "reset-note" });
    note.refresh = (g) => {
      note.textContent = g.members.length > 0
        ? `The group has ${g.members.length} active member${g.members.length === 1 ? "" : "s"}: offsets can only be reset while it is empty (stop its consumers first).`
        : "";
    };
    note.refresh(g);
    return h("section", { class: "reset" },
      h("h2", {}, "Reset offsets"), note,
      h("div", { class: "toolbar" }, h("label", {}, "Partitions ", scope), " ", h("label", {}, "To ", to), " ", ts, off, " ", dry, " ", execute),
      preview);
  }

  function deleteControl(g) {
    return h("button", {
      class: "danger", "data-test": "group-delete",
      onclick: async () => {
        const ok = await Console.confirm(`Delete group ${g.group} and its committed offsets?`, { confirmText: "Delete group", danger: true, typeToConfirm: g.group });
        if (!ok) return;
        try {
          await Console.api(`/api/groups/${enc(g.group)}`, { method: "DELETE" });
          Console.toast(`Group ${g.group} deleted`, "ok");
          Console.navigate("#/groups");
        } catch (err) {
          Console.toast(err.message, "error");
        }
      },
    }, "Delete group");
  }

  async function renderGroup(el, id) {
    let g;
    try {
      g = await Console.api(`/api/groups/${enc(id)}`);
    } catch (err) {
      el.append(h("h1", {}, id), errorBox(err), h("p", {}, h("a", { href: "#/groups" }, "‹ All groups")));
      return;
    }
    const head = h("div", { class: "summary-box" }, summary(g));
    const chartBox = h("div", { class: "chart", "data-test": "lag-chart" });
    const members = h("div", {}, membersTable(g));
    const offsets = h("div", { "data-test": "group-offsets" }, offsetsTable(g));
    const series = [{ name: "total lag", points: [] }];
    const perTopic = new Map(); // topic -> series

    function sample(g) {
      const t = Date.now();
      if (g.totalLag >= 0) series[0].points.push([t, g.totalLag]);
      const byTopic = new Map();
      for (const o of g.offsets) if (o.lag >= 0) byTopic.set(o.topic, (byTopic.get(o.topic) || 0) + o.lag);
      for (const [topic, lag] of byTopic) {
        if (!perTopic.has(topic)) {
          const s = { name: topic, points: [] };
          perTopic.set(topic, s);
        }
        perTopic.get(topic).points.push([t, lag]);
      }
      for (const s of [series[0], ...perTopic.values()]) if (s.points.length > CHART_POINTS) s.points.splice(0, s.points.length - CHART_POINTS);
      const all = perTopic.size > 1 && perTopic.size <= 8 ? [series[0], ...perTopic.values()] : [series[0]];
      chartBox.replaceChildren(Console.lineChart(all, { title: "Lag over time (records)", height: 200 }));
    }

    // Tables are redrawn only when their rows change, so that a sort
    // the user chose survives the polling.
    let shown = { members: JSON.stringify(g.members), offsets: JSON.stringify(g.offsets) };
    function update(next) {
      g = next;
      head.replaceChildren(summary(g));
      const now = { members: JSON.stringify(g.members), offsets: JSON.stringify(g.offsets) };
      if (now.members !== shown.members) members.replaceChildren(membersTable(g));
      if (now.offsets !== shown.offsets) offsets.replaceChildren(offsetsTable(g));
      shown = now;
      if (reset.note) reset.note.refresh(g);
      sample(g);
    }

    const reset = g.type === "share"
      ? { el: h("section", {}, h("h2", {}, "Reset offsets"), h("p", { class: "muted" }, "A share group's start offsets are reset with kafka-share-groups --reset-offsets; the console resets classic and consumer groups.")) }
      : (() => {
        const el = resetForm(g, async () => update(await Console.api(`/api/groups/${enc(id)}`)));
        return { el, note: el.querySelector("[data-test=reset-note]") };
      })();

    el.append(
      h("p", {}, h("a", { href: "#/groups" }, "‹ All groups")),
      h("h1", {}, g.group),
      head,
      h("div", { class: "toolbar" }, deleteControl(g)),
      chartBox,
      h("h2", {}, "Members"), members,
      h("h2", {}, "Offsets"), offsets,
      reset.el);
    sample(g);
    Console.poll(el, POLL_MS, async () => {
      try {
        update(await Console.api(`/api/groups/${enc(id)}`));
      } catch (err) {
        // The group may be deleted or the coordinator moving; keep the
        // last numbers and say why they are stale.
        head.replaceChildren(summary(g), errorBox(err));
      }
    });
  }

  Console.page("groups", {
    title: "Groups",
    order: 40,
    render: async (el, params) => {
      if (params && params.length > 0 && params[0] !== "") return renderGroup(el, params[0]);
      return renderList(el);
    },
  });
})();
