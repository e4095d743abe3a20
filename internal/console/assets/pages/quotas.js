// Quotas: client quotas (DescribeClientQuotas) by entity, set or remove a
// value (AlterClientQuotas). API: internal/console/quotas.go.
(function () {
  "use strict";
  const h = Console.h;
  const ENTITY_TYPES = ["user", "client-id", "ip"];
  const KEYS = ["producer_byte_rate", "consumer_byte_rate", "request_percentage",
    "controller_mutation_rate", "connection_creation_rate"];

  const entityText = (entity) => entity.map((e) => `${e.type}=${e.name === null ? "<default>" : e.name}`).join(", ");

  function setForm(onDone) {
    const type = h("select", { name: "entityType", "data-test": "quota-entity-type" }, ...ENTITY_TYPES.map((t) => h("option", { value: t }, t)));
    const name = h("input", { name: "entityName", placeholder: "name (empty: default)", "data-test": "quota-entity-name" });
    const withClient = h("input", { name: "clientId", placeholder: "and client-id (optional)", "data-test": "quota-client-id" });
    const key = h("select", { name: "key", "data-test": "quota-key" }, ...KEYS.map((k) => h("option", { value: k }, k)));
    const value = h("input", { name: "value", type: "number", step: "any", min: "0", placeholder: "value", "data-test": "quota-value" });
    type.addEventListener("change", () => { withClient.style.display = type.value === "user" ? "" : "none"; });
    const submit = h("button", { type: "submit", class: "primary", "data-test": "quota-set" }, "Set quota");
    const form = h("form", { class: "toolbar", "data-test": "quota-form" }, type, " ", name, " ", withClient, " ", key, " ", value, " ", submit);
    form.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      const entity = [{ type: type.value, name: name.value.trim() === "" ? null : name.value.trim() }];
      if (type.value === "user" && withClient.value.trim() !== "") entity.push({ type: "client-id", name: withClient.value.trim() });
      if (value.value === "") {
        Console.toast("enter a value", "error");
        return;
      }
      try {
        await Console.api("/api/quotas", { method: "POST", body: { entity, set: { [key.value]: Number(value.value) } } });
        Console.toast(`Quota ${key.value} of ${entityText(entity)} set`, "ok");
        onDone();
      } catch (err) {
        Console.toast(err.message, "error");
      }
    });
    return h("section", {}, h("h2", {}, "Set a quota"), form);
  }

  async function render(el) {
    const list = h("div", { "data-test": "quota-list" });
    async function load() {
      let res;
      try {
        res = await Console.api("/api/quotas");
      } catch (err) {
        list.replaceChildren(Console.errorBox(err));
        return;
      }
      const rows = [];
      for (const q of res.quotas) {
        for (const [k, v] of Object.entries(q.values)) rows.push({ entity: entityText(q.entity), raw: q.entity, key: k, value: v });
      }
      if (rows.length === 0) {
        list.replaceChildren(h("p", { class: "muted" }, "No client quotas."));
        return;
      }
      list.replaceChildren(Console.table([
        { key: "entity", title: "Entity" },
        { key: "key", title: "Quota" },
        { key: "value", title: "Value", align: "right" },
        {
          key: "", title: "", render: (r) => h("button", {
            class: "danger", "data-test": "quota-remove",
            onclick: async (ev) => {
              ev.stopPropagation();
              try {
                await Console.api("/api/quotas", { method: "POST", body: { entity: r.raw, remove: [r.key] } });
                Console.toast(`Quota ${r.key} of ${r.entity} removed`, "ok");
                load();
              } catch (err) {
                Console.toast(err.message, "error");
              }
            },
          }, "Remove"),
        },
      ], rows, { sortable: true, pageSize: 100 }));
    }
    el.append(h("h1", {}, "Client quotas"), list, setForm(load));
    await load();
  }

  Console.page("quotas", { title: "Quotas", order: 62, render });
})();
