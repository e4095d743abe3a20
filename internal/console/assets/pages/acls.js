// ACLs: list with filters on principal and resource, create and delete
// through CreateAcls / DeleteAcls. API: internal/console/acls.go. A broker
// without an authorizer, or a user without the right, answers with Kafka's
// error, which the page shows.
(function () {
  "use strict";
  const h = Console.h;

  const RESOURCE_TYPES = ["Topic", "Group", "Cluster", "TransactionalId", "DelegationToken", "User"];
  const OPERATIONS = ["All", "Read", "Write", "Create", "Delete", "Alter", "Describe", "ClusterAction",
    "DescribeConfigs", "AlterConfigs", "IdempotentWrite", "CreateTokens", "DescribeTokens"];
  const PATTERNS = ["Literal", "Prefixed"];

  const select = (name, values, first) => h("select", { name, "data-test": "acl-" + name },
    ...(first ? [h("option", { value: "" }, first)] : []),
    ...values.map((v) => h("option", { value: v }, v)));

  function createForm(onDone) {
    const principal = h("input", { name: "principal", placeholder: "User:alice", "data-test": "acl-principal" });
    const host = h("input", { name: "host", value: "*", size: "8", "data-test": "acl-host" });
    const permission = select("permission", ["Allow", "Deny"]);
    const operation = select("operation", OPERATIONS);
    operation.value = "Read";
    const resourceType = select("resourceType", RESOURCE_TYPES);
    const resourceName = h("input", { name: "resourceName", placeholder: "name or *", "data-test": "acl-resourceName" });
    const patternType = select("patternType", PATTERNS);
    resourceType.addEventListener("change", () => {
      if (resourceType.value === "Cluster") resourceName.value = "kafka-cluster";
    });
    const submit = h("button", { type: "submit", class: "primary", "data-test": "acl-create" }, "Create ACL");
    const form = h("form", { class: "toolbar", "data-test": "acl-form" },
      principal, " ", host, " ", permission, " ", operation, " on ", resourceType, " ", resourceName, " ", patternType, " ", submit);
    form.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      const body = {
        principal: principal.value.trim(), host: host.value.trim() || "*",
        permission: permission.value, operation: operation.value,
        resourceType: resourceType.value, resourceName: resourceName.value.trim(), patternType: patternType.value,
      };
      try {
        await Console.api("/api/acls", { method: "POST", body });
        Console.toast("ACL created", "ok");
        principal.value = "";
        resourceName.value = "";
        onDone();
      } catch (err) {
        Console.toast(err.message, "error");
      }
    });
    return h("section", {}, h("h2", {}, "Create"), form);
  }

  async function render(el) {
    const fPrincipal = h("input", { type: "search", placeholder: "principal (User:alice)", "data-test": "acl-filter-principal" });
    const fType = select("filterType", RESOURCE_TYPES, "any resource");
    const fName = h("input", { type: "search", placeholder: "resource name", "data-test": "acl-filter-name" });
    const list = h("div", { "data-test": "acl-list" });

    async function load() {
      const qs = new URLSearchParams({ principal: fPrincipal.value.trim(), resourceType: fType.value, resourceName: fName.value.trim() });
      let res;
      try {
        res = await Console.api("/api/acls?" + qs.toString());
      } catch (err) {
        list.replaceChildren(Console.errorBox(err));
        return;
      }
      if (res.acls.length === 0) {
        list.replaceChildren(h("p", { class: "muted" }, "No ACLs match."));
        return;
      }
      list.replaceChildren(Console.table([
        { key: "principal", title: "Principal" },
        { key: "host", title: "Host" },
        { key: "permission", title: "Permission" },
        { key: "operation", title: "Operation" },
        { key: "resourceType", title: "Resource type" },
        { key: "resourceName", title: "Resource" },
        { key: "patternType", title: "Pattern" },
        {
          key: "", title: "", render: (a) => h("button", {
            class: "danger", "data-test": "acl-delete",
            onclick: async (ev) => {
              ev.stopPropagation();
              try {
                const res = await Console.api("/api/acls", { method: "DELETE", body: a });
                Console.toast(`Deleted ${res.deleted} ACL${res.deleted === 1 ? "" : "s"}`, "ok");
                load();
              } catch (err) {
                Console.toast(err.message, "error");
              }
            },
          }, "Delete"),
        },
      ], res.acls, { sortable: true, pageSize: 100 }));
    }

    let timer = null;
    const later = () => { clearTimeout(timer); timer = setTimeout(load, 250); };
    fPrincipal.addEventListener("input", later);
    fName.addEventListener("input", later);
    fType.addEventListener("change", load);
    el.append(
      h("h1", {}, "ACLs"),
      h("div", { class: "toolbar" }, fPrincipal, " ", fType, " ", fName),
      list,
      createForm(load));
    await load();
  }

  Console.page("acls", { title: "ACLs", order: 60, render });
})();
