// Topics: the list (searched and paged on the server), create, delete;
// #/topics/<name> shows a topic's partitions (paged, with offsets and
// sizes), its configs with their sources (editable), and adds partitions.
"use strict";
(function () {
  const { h, api, table, pager, toast, confirm, navigate, fmtNumber, fmtBytes } = Console;
  const enc = encodeURIComponent;
  const pageSize = 50;

  function badgeCount(n, kind) {
    return n > 0 ? h("span", { class: "badge " + kind }, fmtNumber(n)) : "0";
  }

  // ---- list ---------------------------------------------------------------

  async function renderList(el, query) {
    let offset = Number(query.get("offset") || 0);
    let q = query.get("q") || "";
    const search = h("input", { type: "search", placeholder: "search topics", value: q, class: "topic-search", "aria-label": "search topics" });
    const internal = h("input", { type: "checkbox", checked: query.get("internal") !== "false", class: "show-internal" });
    const holder = h("div", { class: "topic-list" });
    const createBox = h("div");
    el.append(
      h("h1", null, "Topics"),
      h(
        "div",
        { class: "toolbar" },
        search,
        h("label", { style: "flex-direction:row;align-items:center;gap:4px" }, internal, "internal"),
        h("span", { class: "spacer" }),
        h("button", { class: "primary create-topic", onclick: () => createBox.replaceChildren(createForm(() => createBox.replaceChildren())) }, "Create topic")
      ),
      createBox,
      holder
    );

    async function load() {
      const params = new URLSearchParams({ offset, limit: pageSize, q, internal: internal.checked });
      const r = await api("/api/topics?" + params);
      holder.replaceChildren(
        table(
          [
            { key: "name", title: "Topic", render: (t) => h("a", { href: "#/topics/" + enc(t.name), class: "topic-link" }, t.name, t.internal ? h("span", { class: "badge" }, " internal") : "") },
            { key: "partitions", title: "Partitions", align: "right" },
            { key: "replicationFactor", title: "Replication", align: "right" },
            { key: "underReplicated", title: "Under-replicated", align: "right", render: (t) => badgeCount(t.underReplicated, "warn") },
            { key: "offline", title: "Offline", align: "right", render: (t) => badgeCount(t.offline, "bad") },
            { key: "size", title: "Size", align: "right", render: (t) => (t.size < 0 ? "–" : fmtBytes(t.size)) },
            {
              key: "actions",
              title: "",
              render: (t) =>
                h("button", { class: "danger delete-topic", title: "delete " + t.name, onclick: (ev) => (ev.stopPropagation(), deleteTopic(t.name, load)) }, "Delete"),
            },
          ],
          r.topics,
          { empty: q ? `no topic matches "${q}"` : "no topics" }
        ),
        pager(r.total, r.offset, pageSize, (o) => {
          offset = o;
          load();
        })
      );
    }

    let timer = null;
    search.addEventListener("input", () => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        q = search.value.trim();
        offset = 0;
        load().catch((e) => toast(e.message, "error"));
      }, 250);
    });
    internal.addEventListener("change", () => {
      offset = 0;
      load().catch((e) => toast(e.message, "error"));
    });
    await load();
  }

  function createForm(done) {
    const name = h("input", { type: "text", name: "name", required: true, placeholder: "orders", class: "new-topic-name" });
    const partitions = h("input", { type: "number", name: "partitions", min: 1, value: 1, class: "new-topic-partitions" });
    const rf = h("input", { type: "number", name: "replicationFactor", min: -1, value: -1, title: "-1: the broker's default.replication.factor" });
    const configs = h("textarea", { name: "configs", rows: 2, cols: 40, placeholder: "cleanup.policy=compact\nretention.ms=86400000" });
    const form = h(
      "form",
      {
        class: "panel grid create-topic-form",
        onsubmit: async (ev) => {
          ev.preventDefault();
          const cfg = {};
          for (const line of configs.value.split("\n")) {
            const t = line.trim();
            if (!t) continue;
            const i = t.indexOf("=");
            if (i <= 0) return toast(`config line "${t}" is not key=value`, "error");
            cfg[t.slice(0, i).trim()] = t.slice(i + 1).trim();
          }
          try {
            await api("/api/topics", { method: "POST", body: { name: name.value.trim(), partitions: Number(partitions.value), replicationFactor: Number(rf.value), configs: cfg } });
            toast(`Created topic ${name.value.trim()}`, "ok");
            done();
            navigate("#/topics/" + enc(name.value.trim()));
          } catch (e) {
            toast(e.message, "error");
          }
        },
      },
      h("label", null, "Name", name),
      h("label", null, "Partitions", partitions),
      h("label", null, "Replication factor", rf),
      h("label", null, "Configs (key=value per line)", configs),
      h("div", { class: "toolbar" }, h("button", { type: "submit", class: "primary submit-topic" }, "Create"), h("button", { type: "button", onclick: done }, "Cancel"))
    );
    setTimeout(() => name.focus(), 0);
    return form;
  }

  async function deleteTopic(name, after) {
    const ok = await confirm(`Delete topic ${name} and all its data? This cannot be undone.`, { confirmText: "Delete", danger: true, typeToConfirm: name });
    if (!ok) return;
    try {
      await api("/api/topics/" + enc(name), { method: "DELETE" });
      toast(`Deleted topic ${name}`, "ok");
      await after();
    } catch (e) {
      toast(e.message, "error");
    }
  }

  // ---- detail -------------------------------------------------------------

  async function renderTopic(el, name, tab, query) {
    const t = await api("/api/topics/" + enc(name));
    const tabs = [
      ["partitions", "Partitions"],
      ["configs", "Configs"],
      ["messages", "Messages"],
    ];
    tab = tab || "partitions";
    el.append(
      h(
        "div",
        { class: "toolbar" },
        h("h1", null, h("a", { href: "#/topics" }, "Topics"), " / ", h("span", { class: "topic-name" }, name)),
        h("span", { class: "spacer" }),
        h("button", { class: "danger delete-topic", onclick: () => deleteTopic(name, () => navigate("#/topics")) }, "Delete topic")
      ),
      h(
        "div",
        { class: "cards" },
        card("Partitions", fmtNumber(t.partitions)),
        card("Replication factor", fmtNumber(t.replicationFactor)),
        card("Under-replicated", fmtNumber(t.underReplicated), t.underReplicated > 0),
        card("Offline", fmtNumber(t.offline), t.offline > 0),
        card("Size on leaders", t.size < 0 ? "–" : fmtBytes(t.size)),
        card("Topic ID", h("code", { style: "font-size:12px" }, t.id))
      ),
      h("nav", { class: "tabs" }, tabs.map(([k, title]) => h("a", { href: k === "messages" ? "#/messages/" + enc(name) : `#/topics/${enc(name)}/${k}`, class: k === tab ? "active" : "" }, title)))
    );
    const body = h("div");
    el.append(body);
    if (tab === "configs") await renderConfigs(body, name);
    else await renderPartitions(body, name, t, Number(query.get("offset") || 0));
  }

  function card(label, value, bad) {
    return h("div", { class: "card" + (bad ? " bad" : "") }, h("div", { class: "label" }, label), h("div", { class: "value" }, value));
  }

  async function renderPartitions(body, name, t, offset) {
    const limit = 100;
    const holder = h("div", { class: "partition-list" });
    const count = h("input", { type: "number", min: t.partitions + 1, value: t.partitions + 1, class: "partition-count", style: "width:90px" });
    body.append(
      h(
        "form",
        {
          class: "toolbar add-partitions",
          onsubmit: async (ev) => {
            ev.preventDefault();
            const n = Number(count.value);
            const ok = await confirm(`Grow ${name} from ${t.partitions} to ${n} partitions? Keys will map to different partitions; partitions cannot be removed again.`, { confirmText: "Add partitions" });
            if (!ok) return;
            try {
              await api(`/api/topics/${enc(name)}/partitions`, { method: "POST", body: { count: n } });
              toast(`${name} now has ${n} partitions`, "ok");
              navigate(`#/topics/${enc(name)}/partitions`);
            } catch (e) {
              toast(e.message, "error");
            }
          },
        },
        h("span", { class: "muted" }, "Partitions total:"),
        count,
        h("button", { type: "submit" }, "Add partitions")
      ),
      holder
    );
    async function load() {
      const r = await api(`/api/topics/${enc(name)}/partitions?offset=${offset}&limit=${limit}`);
      const ids = (a) => a.join(", ");
      holder.replaceChildren(
        r.offsetsError ? h("div", { class: "error-box" }, "Offsets: " + r.offsetsError) : "",
        table(
          [
            { key: "partition", title: "Partition", align: "right" },
            { key: "leader", title: "Leader", align: "right", render: (p) => (p.leader < 0 ? h("span", { class: "badge bad" }, "none") : p.leader) },
            { key: "leaderEpoch", title: "Epoch", align: "right" },
            { key: "replicas", title: "Replicas", render: (p) => ids(p.replicas) },
            { key: "isr", title: "ISR", render: (p) => (p.isr.length < p.replicas.length ? h("span", { class: "badge warn" }, ids(p.isr)) : ids(p.isr)) },
            { key: "offlineReplicas", title: "Offline", render: (p) => ids(p.offlineReplicas) },
            { key: "logStartOffset", title: "Start offset", align: "right", render: (p) => (p.logStartOffset < 0 ? "–" : fmtNumber(p.logStartOffset)) },
            { key: "highWatermark", title: "End offset", align: "right", render: (p) => (p.highWatermark < 0 ? "–" : fmtNumber(p.highWatermark)) },
            { key: "messages", title: "Messages", align: "right", render: (p) => (p.highWatermark < 0 || p.logStartOffset < 0 ? "–" : fmtNumber(p.highWatermark - p.logStartOffset)) },
            { key: "size", title: "Size", align: "right", render: (p) => (p.size < 0 ? "–" : fmtBytes(p.size)) },
          ],
          r.partitions,
          { onRowClick: (p) => navigate(`#/messages/${enc(name)}?partition=${p.partition}`) }
        ),
        pager(r.total, r.offset, limit, (o) => {
          offset = o;
          load().catch((e) => toast(e.message, "error"));
        })
      );
    }
    await load();
  }

  async function renderConfigs(body, name) {
    const r = await api(`/api/topics/${enc(name)}/configs`);
    const search = h("input", { type: "search", placeholder: "filter configs", class: "config-filter" });
    const onlySet = h("input", { type: "checkbox" });
    const holder = h("div");
    const save = async (set, del) => {
      try {
        await api(`/api/topics/${enc(name)}/configs`, { method: "PATCH", body: { set, delete: del } });
        toast("Configs of " + name + " updated", "ok");
        navigate(`#/topics/${enc(name)}/configs`);
      } catch (e) {
        toast(e.message, "error");
      }
    };
    const valueCell = (c) => {
      if (c.sensitive) return h("span", { class: "muted" }, "(sensitive)");
      const code = h("code", null, c.value ?? "null");
      const edit = h(
        "button",
        {
          class: "link edit-config",
          onclick: () => {
            const input = h("input", { type: "text", value: c.value ?? "", class: "config-value", style: "width:220px" });
            const cell = code.parentElement;
            cell.replaceChildren(
              input,
              " ",
              h("button", { class: "primary save-config", onclick: () => save({ [c.name]: input.value }, []) }, "Save"),
              " ",
              h("button", { onclick: () => draw() }, "Cancel")
            );
            input.focus();
          },
        },
        "edit"
      );
      return h("span", null, code, " ", edit, c.source === "DYNAMIC_TOPIC_CONFIG" ? [" ", h("button", { class: "link reset-config", onclick: () => save({}, [c.name]) }, "reset")] : "");
    };
    const draw = () => {
      const q = search.value.toLowerCase();
      holder.replaceChildren(
        table(
          [
            { key: "name", title: "Name", render: (c) => h("code", null, c.name) },
            { key: "value", title: "Value", render: valueCell },
            { key: "source", title: "Source", render: (c) => h("span", { class: "badge" + (c.source === "DYNAMIC_TOPIC_CONFIG" ? " ok" : "") }, c.source) },
            { key: "synonyms", title: "Overrides", render: (c) => (c.synonyms || []).filter((s) => s.source !== c.source).map((s) => h("div", { class: "muted" }, `${s.source}: ${s.value ?? "null"}`)) },
          ],
          r.configs.filter((c) => (!q || c.name.includes(q)) && (!onlySet.checked || c.source === "DYNAMIC_TOPIC_CONFIG")),
          { sortable: true }
        )
      );
    };
    search.addEventListener("input", draw);
    onlySet.addEventListener("change", draw);
    draw();
    body.append(h("div", { class: "toolbar" }, search, h("label", { style: "flex-direction:row;align-items:center;gap:4px" }, onlySet, "only set on this topic")), holder);
  }

  Console.page("topics", {
    title: "Topics",
    order: 30,
    render: (el, params, query) => (params.length ? renderTopic(el, params[0], params[1], query) : renderList(el, query)),
  });
})();
