// Silkworm web console: the framework every page uses (global Console).
// Pages live in assets/pages/*.js, are loaded after this file in name
// order, and register themselves with Console.page. Plain ES2020, no
// libraries.
"use strict";

(function () {
  const pages = new Map(); // name → {name, title, order, render, hidden}
  let session = { auth: false, loggedIn: false, user: "", csrf: "" };
  let routeSeq = 0; // guards against a slow render finishing after a newer route

  // ---- element building -------------------------------------------------

  function h(tag, attrs, ...children) {
    const svg = tag.startsWith("svg:");
    const el = svg
      ? document.createElementNS("http://www.w3.org/2000/svg", tag.slice(4))
      : document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k.startsWith("on") && typeof v === "function") {
        el.addEventListener(k.slice(2).toLowerCase(), v);
      } else if (k === "class" || k === "className") {
        if (svg) el.setAttribute("class", v);
        else el.className = v;
      } else if (k === "style" && typeof v === "object") {
        Object.assign(el.style, v);
      } else if (k === "style") {
        el.style.cssText = v;
      } else if (k === "dataset" && typeof v === "object") {
        Object.assign(el.dataset, v);
      } else if (!svg && (k === "value" || k === "checked" || k === "selected" || k === "disabled")) {
        el[k] = v;
      } else {
        el.setAttribute(k, v === true ? "" : String(v));
      }
    }
    append(el, children);
    return el;
  }

  function append(el, children) {
    for (const c of children) {
      if (c === undefined || c === null || c === false) continue;
      if (Array.isArray(c)) append(el, c);
      else if (c instanceof Node) el.appendChild(c);
      else el.appendChild(document.createTextNode(String(c)));
    }
  }

  // ---- API ----------------------------------------------------------------

  async function api(path, opts) {
    opts = opts || {};
    const method = (opts.method || "GET").toUpperCase();
    const headers = { Accept: "application/json" };
    let body;
    if (opts.body !== undefined) {
      headers["Content-Type"] = "application/json";
      body = typeof opts.body === "string" ? opts.body : JSON.stringify(opts.body);
    }
    if (method !== "GET" && method !== "HEAD" && session.csrf) headers["X-Console-CSRF"] = session.csrf;
    const url = path.startsWith("/") ? path : "/" + path;
    let resp;
    try {
      resp = await fetch(url, { method, headers, body, credentials: "same-origin" });
    } catch (e) {
      throw new Error("cannot reach the console: " + e.message);
    }
    let data = null;
    const text = await resp.text();
    if (text) {
      try {
        data = JSON.parse(text);
      } catch (e) {
        data = { error: text };
      }
    }
    if (!resp.ok) {
      const err = new Error((data && data.error) || resp.status + " " + resp.statusText);
      err.status = resp.status;
      if (resp.status === 401 && session.auth && !url.startsWith("/api/login")) {
        session.loggedIn = false;
        showLogin(err.message);
      }
      throw err;
    }
    return data;
  }

  // ---- formatting helpers ---------------------------------------------

  function fmtNumber(n) {
    if (n === undefined || n === null || Number.isNaN(n)) return "–";
    return Number(n).toLocaleString("en-US");
  }

  function fmtBytes(n) {
    if (n === undefined || n === null || n < 0) return "–";
    const units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let i = 0;
    let v = Number(n);
    while (v >= 1024 && i < units.length - 1) {
      v /= 1024;
      i++;
    }
    return (i === 0 ? Math.round(v) : v.toFixed(v < 10 ? 2 : 1)) + " " + units[i];
  }

  function fmtRate(v, unit) {
    if (v === undefined || v === null) return "–";
    if (unit === "B/s") return fmtBytes(v) + "/s";
    const abs = Math.abs(v);
    let s;
    if (abs >= 1e9) s = (v / 1e9).toFixed(1) + "G";
    else if (abs >= 1e6) s = (v / 1e6).toFixed(1) + "M";
    else if (abs >= 1e3) s = (v / 1e3).toFixed(1) + "k";
    else s = abs >= 10 || v === 0 ? v.toFixed(0) : v.toFixed(2);
    return unit ? s + " " + unit : s;
  }

  function fmtTime(ms) {
    if (ms === undefined || ms === null || ms < 0) return "–";
    const d = new Date(ms);
    return d.toISOString().replace("T", " ").replace("Z", "");
  }

  // ---- table ---------------------------------------------------------------

  // table(columns, rows, {sortable, onRowClick, pageSize}): a client-side
  // table; columns are [{key, title, align, render(row) → node|string,
  // sort(row) → value}].
  function table(columns, rows, opts) {
    opts = opts || {};
    const pageSize = opts.pageSize || 0;
    let sortKey = null;
    let sortDir = 1;
    let page = 0;
    const wrap = h("div", { class: "table-wrap" });

    function value(col, row) {
      if (col.sort) return col.sort(row);
      return row[col.key];
    }

    function draw() {
      let view = rows.slice();
      if (sortKey !== null) {
        const col = columns.find((c) => c.key === sortKey);
        view.sort((a, b) => {
          const x = value(col, a);
          const y = value(col, b);
          if (x === y) return 0;
          if (x === undefined || x === null) return 1;
          if (y === undefined || y === null) return -1;
          return (x < y ? -1 : 1) * sortDir;
        });
      }
      const pages = pageSize ? Math.max(1, Math.ceil(view.length / pageSize)) : 1;
      if (page >= pages) page = pages - 1;
      if (pageSize) view = view.slice(page * pageSize, (page + 1) * pageSize);
      const head = h(
        "tr",
        null,
        columns.map((c) =>
          h(
            "th",
            {
              class: (c.align === "right" ? "num" : "") + (opts.sortable ? " sortable" : ""),
              onclick: opts.sortable
                ? () => {
                    if (sortKey === c.key) sortDir = -sortDir;
                    else {
                      sortKey = c.key;
                      sortDir = 1;
                    }
                    draw();
                  }
                : null,
            },
            c.title === undefined ? c.key : c.title,
            opts.sortable && sortKey === c.key ? (sortDir > 0 ? " ▲" : " ▼") : ""
          )
        )
      );
      const body = view.map((row) =>
        h(
          "tr",
          {
            class: opts.onRowClick ? "clickable" : "",
            onclick: opts.onRowClick ? () => opts.onRowClick(row) : null,
          },
          columns.map((c) =>
            h("td", { class: c.align === "right" ? "num" : "" }, c.render ? c.render(row) : fmtCell(row[c.key]))
          )
        )
      );
      const t = h("table", { class: "data" }, h("thead", null, head), h("tbody", null, body));
      if (!rows.length) {
        t.querySelector("tbody").appendChild(h("tr", null, h("td", { colspan: columns.length, class: "empty" }, opts.empty || "none")));
      }
      wrap.replaceChildren(t);
      if (pageSize && pages > 1) {
        wrap.appendChild(
          pager(rows.length, page * pageSize, pageSize, (off) => {
            page = Math.floor(off / pageSize);
            draw();
          })
        );
      }
    }
    draw();
    return wrap;
  }

  function fmtCell(v) {
    if (v === undefined || v === null) return "";
    if (typeof v === "number") return fmtNumber(v);
    if (Array.isArray(v)) return v.join(", ");
    if (typeof v === "object") return JSON.stringify(v);
    return String(v);
  }

  // pager(total, offset, limit, onChange(offset)): previous/next buttons
  // for a list paged server-side.
  function pager(total, offset, limit, onChange) {
    const last = Math.max(0, Math.ceil(total / limit) - 1);
    const cur = Math.floor(offset / limit);
    return h(
      "div",
      { class: "pager" },
      h("button", { disabled: cur <= 0, onclick: () => onChange(0) }, "«"),
      h("button", { disabled: cur <= 0, onclick: () => onChange(Math.max(0, offset - limit)), class: "prev" }, "‹ prev"),
      h("span", null, total ? `${fmtNumber(offset + 1)}–${fmtNumber(Math.min(total, offset + limit))} of ${fmtNumber(total)}` : "0 of 0"),
      h("button", { disabled: cur >= last, onclick: () => onChange(offset + limit), class: "next" }, "next ›"),
      h("button", { disabled: cur >= last, onclick: () => onChange(last * limit) }, "»")
    );
  }

  // ---- charts -----------------------------------------------------------

  const palette = ["#2b6cb0", "#c05621", "#2f855a", "#6b46c1", "#b83280", "#2c7a7b", "#975a16"];

  // lineChart(series, {title, unit, height}): an SVG line chart; series are
  // [{name, points: [[tMillis, value], ...]}].
  function lineChart(series, opts) {
    opts = opts || {};
    const W = opts.width || 560;
    const H = opts.height || 180;
    const padL = 64, padR = 12, padT = opts.title ? 24 : 8, padB = 22;
    const svg = h("svg:svg", { class: "chart", viewBox: `0 0 ${W} ${H + 20}`, width: "100%", role: "img", "aria-label": opts.title || "chart" });
    if (opts.title) svg.appendChild(h("svg:text", { x: padL, y: 15, class: "chart-title" }, opts.title));
    const all = [];
    for (const s of series) for (const p of s.points || []) all.push(p);
    if (!all.length) {
      svg.appendChild(h("svg:text", { x: W / 2, y: H / 2, "text-anchor": "middle", class: "chart-empty" }, opts.empty || "no data yet"));
      return svg;
    }
    let t0 = Math.min(...all.map((p) => p[0]));
    let t1 = Math.max(...all.map((p) => p[0]));
    if (t1 === t0) t1 = t0 + 1;
    let vmax = Math.max(...all.map((p) => p[1]));
    const vmin = Math.min(0, ...all.map((p) => p[1]));
    if (vmax <= vmin) vmax = vmin + 1;
    vmax = niceCeil(vmax);
    const x = (t) => padL + ((t - t0) / (t1 - t0)) * (W - padL - padR);
    const y = (v) => padT + (1 - (v - vmin) / (vmax - vmin)) * (H - padT - padB);
    for (let i = 0; i <= 4; i++) {
      const v = vmin + ((vmax - vmin) * i) / 4;
      svg.appendChild(h("svg:line", { x1: padL, x2: W - padR, y1: y(v), y2: y(v), class: "grid" }));
      svg.appendChild(h("svg:text", { x: padL - 6, y: y(v) + 4, "text-anchor": "end", class: "axis" }, fmtRate(v, opts.unit)));
    }
    for (const t of [t0, (t0 + t1) / 2, t1]) {
      svg.appendChild(
        h("svg:text", { x: x(t), y: H - 4, "text-anchor": t === t0 ? "start" : t === t1 ? "end" : "middle", class: "axis" }, new Date(t).toTimeString().slice(0, 8))
      );
    }
    let legendX = padL;
    series.forEach((s, i) => {
      const pts = (s.points || []).map((p) => `${x(p[0]).toFixed(1)},${y(p[1]).toFixed(1)}`).join(" ");
      const color = s.color || palette[i % palette.length];
      if (pts) svg.appendChild(h("svg:polyline", { points: pts, fill: "none", stroke: color, "stroke-width": 1.8 }, h("svg:title", null, s.name)));
      if ((s.points || []).length === 1) svg.appendChild(h("svg:circle", { cx: x(s.points[0][0]), cy: y(s.points[0][1]), r: 2.5, fill: color }));
      const last = (s.points || []).length ? s.points[s.points.length - 1][1] : null;
      const label = `${s.name}${last === null ? "" : " " + fmtRate(last, opts.unit)}`;
      svg.appendChild(h("svg:rect", { x: legendX, y: H + 6, width: 10, height: 10, fill: color }));
      svg.appendChild(h("svg:text", { x: legendX + 14, y: H + 15, class: "legend" }, label));
      legendX += 14 + label.length * 6.2 + 18;
    });
    return svg;
  }

  function niceCeil(v) {
    const p = Math.pow(10, Math.floor(Math.log10(v)));
    for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= v) return m * p;
    return 10 * p;
  }

  // ---- toasts, dialogs, polling -----------------------------------------

  function toast(message, kind) {
    const box = document.getElementById("toasts");
    const t = h("div", { class: "toast " + (kind || "ok"), role: "status" }, message);
    box.appendChild(t);
    setTimeout(() => t.remove(), kind === "error" ? 8000 : 4000);
  }

  // confirm(message, {confirmText, danger, typeToConfirm}) → Promise<bool>:
  // an in-page dialog (window.confirm would block automated browsers).
  function confirm(message, opts) {
    opts = opts || {};
    return new Promise((resolve) => {
      const input = opts.typeToConfirm ? h("input", { type: "text", class: "confirm-input", placeholder: opts.typeToConfirm }) : null;
      const ok = h("button", { class: opts.danger ? "danger confirm-ok" : "primary confirm-ok", disabled: !!input }, opts.confirmText || "OK");
      const close = (v) => {
        overlay.remove();
        resolve(v);
      };
      if (input) input.addEventListener("input", () => (ok.disabled = input.value !== opts.typeToConfirm));
      ok.addEventListener("click", () => close(true));
      const overlay = h(
        "div",
        { class: "overlay" },
        h(
          "div",
          { class: "dialog", role: "dialog" },
          h("p", null, message),
          input ? h("p", { class: "muted" }, "Type ", h("code", null, opts.typeToConfirm), " to confirm:") : null,
          input,
          h("div", { class: "actions" }, h("button", { class: "confirm-cancel", onclick: () => close(false) }, "Cancel"), ok)
        )
      );
      document.body.appendChild(overlay);
      (input || ok).focus();
    });
  }

  // poll(el, ms, fn): calls fn every ms while el is in the document.
  function poll(el, ms, fn) {
    let busy = false;
    const id = setInterval(async () => {
      if (!el.isConnected) {
        clearInterval(id);
        return;
      }
      if (busy || document.hidden) return;
      busy = true;
      try {
        await fn();
      } catch (e) {
        if (e.status !== 401) console.warn("poll:", e.message);
      } finally {
        busy = false;
      }
    }, ms);
    return () => clearInterval(id);
  }

  // ---- routing ------------------------------------------------------------

  function page(name, def) {
    pages.set(name, Object.assign({ name, title: name, order: 100 }, def));
  }

  function navigate(hash) {
    if (!hash.startsWith("#")) hash = "#" + hash;
    if (location.hash === hash) route();
    else location.hash = hash;
  }

  function parseHash() {
    const raw = location.hash.replace(/^#\/?/, "");
    const [path, query] = raw.split("?");
    const parts = path.split("/").filter((p) => p !== "").map(decodeURIComponent);
    return { name: parts[0] || defaultPage(), params: parts.slice(1), query: new URLSearchParams(query || "") };
  }

  function defaultPage() {
    return pages.has("overview") ? "overview" : sorted()[0]?.name || "";
  }

  function sorted() {
    return [...pages.values()].sort((a, b) => a.order - b.order || a.name.localeCompare(b.name));
  }

  function drawNav(current) {
    const nav = document.getElementById("nav");
    nav.replaceChildren(
      ...sorted()
        .filter((p) => !p.hidden)
        .map((p) => h("a", { href: "#/" + p.name, class: p.name === current ? "active" : "", dataset: { page: p.name } }, p.title))
    );
    const who = document.getElementById("who");
    who.replaceChildren();
    if (session.auth && session.loggedIn) {
      who.append(
        h("span", { class: "muted" }, session.user + " "),
        h(
          "button",
          {
            class: "link logout",
            onclick: async () => {
              await api("/api/logout", { method: "POST" }).catch(() => {});
              session.loggedIn = false;
              session.csrf = "";
              showLogin("");
            },
          },
          "log out"
        )
      );
    }
  }

  async function route() {
    if (session.auth && !session.loggedIn) return showLogin("");
    const seq = ++routeSeq;
    const { name, params, query } = parseHash();
    const p = pages.get(name);
    drawNav(name);
    delete document.body.dataset.ready;
    delete document.body.dataset.error;
    const main = document.getElementById("main");
    const el = h("section", { class: "page page-" + name });
    main.replaceChildren(el);
    if (!p) {
      el.append(h("h1", null, "Not found"), h("p", null, `No page "${name}".`));
      document.body.dataset.ready = name;
      return;
    }
    document.title = p.title + " · Silkworm";
    try {
      await p.render(el, params, query);
    } catch (e) {
      if (seq !== routeSeq) return;
      if (e.status === 401 && session.auth) return;
      el.appendChild(errorBox(e));
      document.body.dataset.error = e.message;
    }
    if (seq === routeSeq) document.body.dataset.ready = name;
  }

  function errorBox(e) {
    return h("div", { class: "error-box", role: "alert" }, h("strong", null, e.status === 403 ? "Not authorized: " : "Error: "), e.message);
  }

  function showLogin(message) {
    drawNav("");
    delete document.body.dataset.ready;
    const user = h("input", { type: "text", name: "user", autocomplete: "username", required: true, autofocus: true });
    const password = h("input", { type: "password", name: "password", autocomplete: "current-password" });
    const msg = h("p", { class: "error-text" }, message || "");
    const form = h(
      "form",
      {
        class: "login",
        onsubmit: async (ev) => {
          ev.preventDefault();
          msg.textContent = "";
          try {
            const s = await api("/api/login", { method: "POST", body: { user: user.value, password: password.value } });
            Object.assign(session, s);
            route();
          } catch (e) {
            msg.textContent = e.message;
            document.body.dataset.ready = "login";
          }
        },
      },
      h("h1", null, "Log in"),
      h("p", { class: "muted" }, `This broker authenticates with SASL ${session.mechanism || ""}; log in as a Kafka user. What you can see and do is what that user's ACLs allow.`),
      h("label", null, "User", user),
      h("label", null, "Password", password),
      msg,
      h("button", { type: "submit", class: "primary" }, "Log in")
    );
    document.getElementById("main").replaceChildren(form);
    document.body.dataset.ready = "login";
  }

  async function start() {
    try {
      session = await api("/api/session");
    } catch (e) {
      document.getElementById("main").replaceChildren(errorBox(e));
      document.body.dataset.ready = "error";
      return;
    }
    window.addEventListener("hashchange", route);
    route();
  }

  window.Console = {
    page,
    api,
    h,
    table,
    pager,
    lineChart,
    navigate,
    toast,
    poll,
    confirm,
    errorBox,
    fmtNumber,
    fmtBytes,
    fmtRate,
    fmtTime,
    get session() {
      return session;
    },
  };

  document.addEventListener("DOMContentLoaded", start);
})();
