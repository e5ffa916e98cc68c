// The filter builder: rows of field, operator and value from the advertised fields (§8).

import { h } from "../dom.mjs";
import { advertisedFields, operatorsFor } from "../filters.mjs";

export function filterBuilder(capabilities, rows) {
  const fields = advertisedFields(capabilities?.filter);
  const list = h("div", { class: "filter-rows" });
  const operators = capabilities?.filter?.operators || [];
  const add = (row) => list.append(filterRow(fields, operators, row, list));
  for (const row of rows) add(row);
  if (!fields.length) {
    return h("fieldset", { class: "filters" }, h("legend", {}, "Filters"), h("p", { class: "hint" }, "This server advertises no filter fields."));
  }
  return h("fieldset", { class: "filters" }, h("legend", {}, "Filters"), list,
    h("button", { type: "button", id: "add-filter", class: "secondary", onclick: () => {
      add({ field: fields[0].name, op: "eq", value: "" });
      list.lastElementChild?.querySelector("select")?.focus();
    } }, "Add filter"));
}

function filterRow(fields, advertised, row, list) {
  const number = list.children.length + 1;
  const fieldSelect = h("select", { "aria-label": `filter ${number} field`, class: "filter-field" },
    fields.map((field) => h("option", { value: field.name, selected: field.name === row.field }, `${field.name} (${field.type})`)));
  const opSelect = h("select", { "aria-label": `filter ${number} operator`, class: "filter-op" });
  const valueInput = h("input", { type: "text", "aria-label": `filter ${number} value`, class: "filter-value", value: row.value ?? "", placeholder: "value (a,b for in)" });
  const fillOperators = (current) => {
    const type = fields.find((field) => field.name === fieldSelect.value)?.type || "keyword";
    opSelect.replaceChildren(...operatorsFor(type, advertised).map((op) => h("option", { value: op, selected: op === current }, op)));
  };
  fillOperators(row.op);
  fieldSelect.addEventListener("change", () => fillOperators(opSelect.value));
  const element = h("div", { class: "filter-row" }, fieldSelect, opSelect, valueInput,
    h("button", { type: "button", class: "secondary", "aria-label": `remove filter ${number}`, onclick: () => element.remove() }, "Remove"));
  return element;
}

/** The rows the builder in ``form`` holds now: [{field, op, value}]. */
export function readFilters(form) {
  return [...form.querySelectorAll(".filter-row")].map((row) => ({
    field: row.querySelector(".filter-field").value,
    op: row.querySelector(".filter-op").value,
    value: row.querySelector(".filter-value").value,
  }));
}
