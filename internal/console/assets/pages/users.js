// Users: SCRAM credentials (DescribeUserScramCredentials), create or update
// one with a mechanism and iteration count, delete one
// (AlterUserScramCredentials). API: internal/console/users.go.
(function () {
  "use strict";
  const h = Console.h;
  const enc = encodeURIComponent;
  const MECHANISMS = ["SCRAM-SHA-256", "SCRAM-SHA-512"];

  function upsertForm(onDone) {
    const user = h("input", { name: "user", placeholder: "user name", "data-test": "user-name", autocomplete: "off" });
    const password = h("input", { name: "password", type: "password", placeholder: "password", "data-test": "user-password", autocomplete: "new-password" });
    const mechanism = h("select", { name: "mechanism", "data-test": "user-mechanism" }, ...MECHANISMS.map((m) => h("option", { value: m }, m)));
    const iterations = h("input", { name: "iterations", type: "number", min: "4096", value: "8192", size: "7", "data-test": "user-iterations" });
    const submit = h("button", { type: "submit", class: "primary", "data-test": "user-save" }, "Create / update");
    const form = h("form", { class: "toolbar", "data-test": "user-form" },
      user, " ", password, " ", mechanism, " ", h("label", {}, "iterations ", iterations), " ", submit);
    form.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      const body = { user: user.value.trim(), password: password.value, mechanism: mechanism.value, iterations: Number(iterations.value) };
      try {
        await Console.api("/api/users", { method: "POST", body });
        Console.toast(`Credential of ${body.user} saved`, "ok");
        password.value = "";
        onDone();
      } catch (err) {
        Console.toast(err.message, "error");
      }
    });
    return h("section", {}, h("h2", {}, "Create or update a SCRAM credential"), form);
  }

  async function render(el) {
    const list = h("div", { "data-test": "user-list" });
    async function load() {
      let res;
      try {
        res = await Console.api("/api/users");
      } catch (err) {
        list.replaceChildren(Console.errorBox(err));
        return;
      }
      const rows = [];
      for (const u of res.users) for (const c of u.credentials) rows.push({ user: u.user, mechanism: c.mechanism, iterations: c.iterations });
      if (rows.length === 0) {
        list.replaceChildren(h("p", { class: "muted" }, "No SCRAM users."));
        return;
      }
      list.replaceChildren(Console.table([
        { key: "user", title: "User" },
        { key: "mechanism", title: "Mechanism" },
        { key: "iterations", title: "Iterations", align: "right" },
        {
          key: "", title: "", render: (r) => h("button", {
            class: "danger", "data-test": "user-delete",
            onclick: async (ev) => {
              ev.stopPropagation();
              try {
                await Console.api(`/api/users/${enc(r.user)}?mechanism=${enc(r.mechanism)}`, { method: "DELETE" });
                Console.toast(`Deleted ${r.mechanism} credential of ${r.user}`, "ok");
                load();
              } catch (err) {
                Console.toast(err.message, "error");
              }
            },
          }, "Delete"),
        },
      ], rows, { sortable: true, pageSize: 100 }));
    }
    el.append(h("h1", {}, "SCRAM users"), list, upsertForm(load));
    await load();
  }

  Console.page("users", { title: "Users", order: 61, render });
})();
