// Messages: browse a topic's records (newest N, from an offset, from a
// timestamp, or the oldest), shown as text, pretty JSON or hex, with
// headers, timestamps, partition and offset, optionally filtered on key or
// value; and produce a record with key, value, headers and partition.
"use strict";
(function () {
  const { h, api, toast, navigate, fmtNumber, fmtTime } = Console;
  const enc = encodeURIComponent;

  function bytesOf(b64) {
    if (b64 === null || b64 === undefined) return null;
    const s = atob(b64);
    const out = new Uint8Array(s.length);
    for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
    return out;
  }

  const decoder = new TextDecoder("utf-8");

  function hexDump(bytes) {
    const lines = [];
    for (let i = 0; i < bytes.length; i += 16) {
      const chunk = bytes.subarray(i, i + 16);
      const hex = Array.from(chunk, (b) => b.toString(16).padStart(2, "0")).join(" ");
      const ascii = Array.from(chunk, (b) => (b >= 32 && b < 127 ? String.fromCharCode(b) : ".")).join("");
      lines.push(i.toString(16).padStart(6, "0") + "  " + hex.padEnd(48) + " " + ascii);
    }
    return lines.join("\n");
  }

  // show renders bytes in the chosen format.
  function show(b64, format) {
    const bytes = bytesOf(b64);
    if (bytes === null) return h("span", { class: "muted" }, "null");
    if (format === "hex") return h("pre", { class: "hex" }, hexDump(bytes));
    const text = decoder.decode(bytes);
    if (format === "json") {
      try {
        return h("pre", { class: "json" }, JSON.stringify(JSON.parse(text), null, 2));
      } catch (e) {
        return h("pre", null, text);
      }
    }
    return h("pre", null, text);
  }

  async function render(el, params, query) {
    el.append(h("h1", null, "Messages"));
    const topics = await api("/api/topics?limit=1000&internal=false&sizes=false");
    const topic = params[0] || "";
    const list = h("datalist", { id: "topic-names" }, topics.topics.map((t) => h("option", { value: t.name })));
    const topicIn = h("input", { type: "text", list: "topic-names", value: topic, placeholder: "topic", class: "msg-topic", "aria-label": "topic" });
    const pick = h(
      "form",
      {
        class: "toolbar",
        onsubmit: (ev) => {
          ev.preventDefault();
          if (topicIn.value.trim()) navigate("#/messages/" + enc(topicIn.value.trim()));
        },
      },
      list,
      topicIn,
      h("button", { type: "submit" }, "Open")
    );
    el.append(pick);
    if (!topic) {
      el.append(h("p", { class: "muted" }, "Choose a topic to browse its messages or produce one."));
      return;
    }
    const t = await api("/api/topics/" + enc(topic));
    // Up to 100 partitions are read at once; a topic with more is read one
    // partition at a time, chosen by number rather than from a long list.
    const many = t.partitions > 100;
    const partSel = many
      ? h("input", { type: "number", min: 0, max: t.partitions - 1, value: 0, class: "msg-partition", style: "width:90px", "aria-label": "partition", title: `partition (0–${t.partitions - 1})` })
      : h(
          "select",
          { class: "msg-partition", "aria-label": "partition" },
          h("option", { value: "all" }, "all partitions"),
          Array.from({ length: t.partitions }, (_, i) => h("option", { value: i }, "partition " + i))
        );
    partSel.value = query.get("partition") ?? (many ? "0" : "all");
    const mode = h(
      "select",
      { class: "msg-mode", "aria-label": "from" },
      h("option", { value: "newest" }, "newest"),
      h("option", { value: "oldest" }, "oldest"),
      h("option", { value: "offset" }, "from offset"),
      h("option", { value: "timestamp" }, "from time")
    );
    const offsetIn = h("input", { type: "number", min: 0, value: 0, class: "msg-offset", style: "width:110px;display:none", "aria-label": "offset" });
    const timeIn = h("input", { type: "datetime-local", step: 1, class: "msg-time", style: "display:none", "aria-label": "time" });
    const limitIn = h("input", { type: "number", min: 1, max: 500, value: 50, class: "msg-limit", style: "width:70px", "aria-label": "limit" });
    const filterIn = h("input", { type: "search", placeholder: "filter key/value/headers", class: "msg-filter" });
    const format = h("select", { class: "msg-format", "aria-label": "format" }, h("option", { value: "text" }, "text"), h("option", { value: "json" }, "JSON"), h("option", { value: "hex" }, "hex"));
    mode.addEventListener("change", () => {
      offsetIn.style.display = mode.value === "offset" ? "" : "none";
      timeIn.style.display = mode.value === "timestamp" ? "" : "none";
    });
    const results = h("div", { class: "messages" });
    let last = null;

    async function read() {
      const q = new URLSearchParams({ partition: partSel.value, mode: mode.value, limit: limitIn.value });
      if (mode.value === "offset") q.set("offset", offsetIn.value || "0");
      if (mode.value === "timestamp") {
        if (!timeIn.value) return toast("choose a time", "error");
        q.set("timestamp", String(new Date(timeIn.value).getTime()));
      }
      if (filterIn.value) q.set("filter", filterIn.value);
      last = await api(`/api/topics/${enc(topic)}/messages?${q}`);
      draw();
    }

    function draw() {
      if (!last) return;
      const f = format.value;
      const rows = last.messages.map((m) =>
        h(
          "tr",
          { class: "message" },
          h("td", { class: "num" }, m.partition),
          h("td", { class: "num" }, fmtNumber(m.offset)),
          h("td", { title: m.timestampType }, fmtTime(m.timestamp)),
          h("td", { class: "msg-key" }, show(m.key, f)),
          h("td", { class: "msg-value" }, show(m.value, f), m.truncated ? h("div", { class: "muted" }, `(shown in part: ${fmtNumber(m.valueSize)} bytes)`) : ""),
          h("td", { class: "msg-headers" }, m.headers.map((hd) => h("div", null, h("code", null, hd.key), ": ", show(hd.value, f === "hex" ? "hex" : "text"))))
        )
      );
      results.replaceChildren(
        h("p", { class: "muted" }, `${last.messages.length} message(s)` + (filterIn.value ? `, ${fmtNumber(last.scanned)} scanned` : "") + (last.complete ? "" : " (stopped before the end offsets)")),
        h(
          "div",
          { class: "table-wrap" },
          h(
            "table",
            { class: "data" },
            h("thead", null, h("tr", null, ["Partition", "Offset", "Timestamp", "Key", "Value", "Headers"].map((c, i) => h("th", { class: i < 2 ? "num" : "" }, c)))),
            h("tbody", null, rows.length ? rows : h("tr", null, h("td", { colspan: 6, class: "empty" }, "no messages")))
          )
        )
      );
    }
    format.addEventListener("change", draw);

    const readForm = h(
      "form",
      {
        class: "toolbar read-form",
        onsubmit: (ev) => {
          ev.preventDefault();
          read().catch((e) => toast(e.message, "error"));
        },
      },
      partSel,
      mode,
      offsetIn,
      timeIn,
      h("span", { class: "muted" }, "limit"),
      limitIn,
      filterIn,
      h("span", { class: "muted" }, "show as"),
      format,
      h("button", { type: "submit", class: "primary read-messages" }, "Read")
    );

    // ---- produce ----
    const pPart = many
      ? h("input", { type: "number", min: 0, max: t.partitions - 1, placeholder: "default partitioner", class: "produce-partition", style: "width:160px", "aria-label": "partition" })
      : h("select", { class: "produce-partition", "aria-label": "partition" }, h("option", { value: "" }, "default partitioner"), Array.from({ length: t.partitions }, (_, i) => h("option", { value: i }, "partition " + i)));
    const pKey = h("input", { type: "text", placeholder: "key (empty: null key)", class: "produce-key" });
    const pValue = h("textarea", { rows: 3, cols: 60, placeholder: "value", class: "produce-value" });
    const pHeaders = h("textarea", { rows: 2, cols: 30, placeholder: "header=value per line", class: "produce-headers" });
    const produceForm = h(
      "form",
      {
        class: "panel grid produce-form",
        onsubmit: async (ev) => {
          ev.preventDefault();
          const headers = [];
          for (const line of pHeaders.value.split("\n")) {
            if (!line.trim()) continue;
            const i = line.indexOf("=");
            if (i <= 0) return toast(`header line "${line}" is not key=value`, "error");
            headers.push({ key: line.slice(0, i).trim(), value: line.slice(i + 1) });
          }
          try {
            const r = await api(`/api/topics/${enc(topic)}/messages`, {
              method: "POST",
              body: { partition: pPart.value === "" ? null : Number(pPart.value), key: pKey.value === "" ? null : pKey.value, value: pValue.value, headers },
            });
            toast(`Produced to partition ${r.partition} at offset ${r.offset}`, "ok");
            document.body.dataset.produced = `${r.partition}:${r.offset}`;
            await read();
          } catch (e) {
            toast(e.message, "error");
          }
        },
      },
      h("label", null, "Partition", pPart),
      h("label", null, "Key", pKey),
      h("label", { style: "grid-column: span 2" }, "Value", pValue),
      h("label", null, "Headers", pHeaders),
      h("div", null, h("button", { type: "submit", class: "primary produce" }, "Produce"))
    );

    el.append(
      h("p", null, h("a", { href: "#/topics/" + enc(topic) }, topic), h("span", { class: "muted" }, ` · ${t.partitions} partition(s)`)),
      readForm,
      results,
      h("h2", null, "Produce a record"),
      produceForm
    );
    await read();
  }

  Console.page("messages", { title: "Messages", order: 40, render });
})();
