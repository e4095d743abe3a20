// Bench: the `silkworm bench` runs found in silkworm.console.bench.dir,
// newest first, and a run's report (its report.html, framed read-only).
// API: internal/console/bench.go.
(function () {
  "use strict";
  const h = Console.h;
  const enc = encodeURIComponent;

  const when = (t) => (t ? new Date(t).toLocaleString() : "-");
  function took(run) {
    if (!run.started || !run.finished) return "-";
    const s = Math.round((new Date(run.finished) - new Date(run.started)) / 1000);
    return s >= 3600 ? `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m` : s >= 60 ? `${Math.floor(s / 60)}m ${s % 60}s` : `${s}s`;
  }

  async function renderList(el) {
    let res;
    try {
      res = await Console.api("/api/bench");
    } catch (err) {
      el.append(h("h1", {}, "Bench reports"), Console.errorBox(err));
      return;
    }
    el.append(h("h1", {}, "Bench reports"),
      h("p", { class: "muted" }, "Runs of ", h("code", {}, "silkworm bench"), " in ", h("code", {}, res.dir || "(no directory configured)"),
        " (silkworm.console.bench.dir)."));
    if (res.runs.length === 0) {
      el.append(h("p", { class: "muted", "data-test": "bench-empty" }, "No bench runs yet. Run ", h("code", {}, "silkworm bench --out " + (res.dir || "bench-results") + "/<name>"), "."));
      return;
    }
    el.append(Console.table([
      { key: "name", title: "Run", render: (r) => h("a", { href: "#/bench/" + enc(r.name) }, r.name) },
      { key: "started", title: "Started", render: (r) => when(r.started) },
      { key: "took", title: "Took", align: "right", render: (r) => took(r) },
      { key: "profile", title: "Profile", render: (r) => r.profile || "-" },
      { key: "cluster", title: "Cluster", render: (r) => r.cluster || "-" },
      { key: "scenarios", title: "Scenarios", render: (r) => (r.scenarios.length > 4 ? `${r.scenarios.length} scenarios` : r.scenarios.join(", ") || "-") },
      { key: "points", title: "Points", align: "right" },
      { key: "failed", title: "Failed", align: "right" },
      { key: "note", title: "", render: (r) => (r.interrupted ? "interrupted" : "") + (r.error ? " " + r.error : "") },
    ], res.runs, { sortable: true, pageSize: 50, onRowClick: (r) => Console.navigate("#/bench/" + enc(r.name)) }));
  }

  async function renderRun(el, name) {
    let run;
    el.append(h("p", {}, h("a", { href: "#/bench" }, "‹ All runs")));
    try {
      run = await Console.api(`/api/bench/${enc(name)}`);
    } catch (err) {
      el.append(h("h1", {}, name), Console.errorBox(err));
      return;
    }
    const base = `api/bench/${enc(run.name)}/`;
    el.append(
      h("h1", {}, run.name),
      h("p", {}, `${run.profile || "?"} profile, started ${when(run.started)}, took ${took(run)}, ${run.points} points`,
        run.failed ? `, ${run.failed} failed` : "", run.interrupted ? " (interrupted)" : ""),
      h("p", { class: "files" }, "Files: ", ...(run.files || []).flatMap((f) => [h("a", { href: base + enc(f), target: "_blank", rel: "noopener" }, f), " "])));
    if (run.hasReport) {
      el.append(h("iframe", { class: "bench-report", "data-test": "bench-report", src: base + "report.html", sandbox: "allow-same-origin", title: "bench report " + run.name,
        onload: (ev) => { ev.target.dataset.loaded = "1"; }, style: "width:100%;height:80vh;border:1px solid #ccc" }));
    } else {
      el.append(h("p", { class: "muted" }, "This run has no report.html."));
    }
  }

  Console.page("bench", {
    title: "Bench",
    order: 80,
    render: async (el, params) => (params && params.length > 0 && params[0] !== "" ? renderRun(el, params[0]) : renderList(el)),
  });
})();
