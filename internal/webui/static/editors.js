// Bunting web UI, the editors' helpers (app.js sends the forms):
// variants' split in percentages, balanced as rows come and go, and their
// JSON payloads checked and formatted; constraints' context fields typed in
// place, with the defined ones suggested and undefined ones defined
// without leaving the editor.
(function () {
  "use strict";
  const meta = (n) => (document.querySelector('meta[name="' + n + '"]') || {}).content || "";
  const base = meta("base-path");

  // ---- Variants -------------------------------------------------------

  const pct = (w) => String(Math.round(w) / 10);

  // balance gives the balanced ("variable") variants of a list the weight
  // (of 1000) the fixed ones leave, in equal shares, the first ones getting
  // the remainder one each: what the server stores (domain.spreadWeights).
  function balance(list) {
    if (!list) return;
    const rows = Array.from(list.querySelectorAll(":scope > [data-item]"));
    let fixed = 0;
    const variable = [];
    for (const row of rows) {
      const share = row.querySelector("[data-share]");
      const weight = row.querySelector('input[name="weight"]');
      const isFixed = row.querySelector("[data-weight-type]").value === "fix";
      share.readOnly = !isFixed;
      if (isFixed) {
        const w = Math.max(0, Math.min(1000, Math.round(Number(share.value || 0) * 10)));
        weight.value = String(w);
        fixed += w;
      } else variable.push(row);
    }
    const left = Math.max(0, 1000 - fixed);
    variable.forEach((row, i) => {
      const w = Math.floor(left / variable.length) + (i < left % variable.length ? 1 : 0);
      row.querySelector('input[name="weight"]').value = String(w);
      row.querySelector("[data-share]").value = pct(w);
    });
    summarize(list, rows, fixed);
  }

  // summarize says the split under the list, and what is wrong with it.
  function summarize(list, rows, fixed) {
    const out = list.parentElement.querySelector("[data-split-summary]");
    if (!out) return;
    out.classList.remove("form-error");
    if (!rows.length) { out.textContent = ""; return; }
    const parts = rows.map((r) => (r.querySelector('input[name="name"]').value || "(unnamed)") + " " + pct(Number(r.querySelector('input[name="weight"]').value)) + " %");
    let text = "Split: " + parts.join(", ") + ".";
    if (fixed > 1000) { text = "The fixed shares add up to " + pct(fixed) + " %, more than 100 %."; out.classList.add("form-error"); }
    else if (!rows.some((r) => r.querySelector("[data-weight-type]").value !== "fix")) { text += " At least one variant must be balanced automatically."; out.classList.add("form-error"); }
    out.textContent = text;
  }

  // checkPayload checks one row's JSON payload; it returns the error (and
  // shows it next to the box) or "".
  function checkPayload(row) {
    const type = row.querySelector("[data-payload-type]");
    const box = row.querySelector("[data-payload]");
    const err = row.querySelector("[data-payload-error]");
    const format = row.querySelector("[data-format-json]");
    if (!type || !box) return "";
    const json = type.value === "json";
    box.classList.toggle("json", json);
    box.rows = json ? Math.max(4, Math.min(12, box.value.split("\n").length)) : 1;
    if (format) format.hidden = !json;
    let problem = "";
    if (json && box.value.trim() !== "") {
      try {
        const v = JSON.parse(box.value);
        if (v === null || typeof v !== "object") problem = "A JSON payload must be an object or an array.";
      } catch (e) { problem = "Invalid JSON: " + e.message; }
    }
    err.textContent = problem;
    err.hidden = !problem;
    if (problem) { box.setAttribute("aria-invalid", "true"); if (!err.id) err.id = "payload-error-" + Math.random().toString(36).slice(2); box.setAttribute("aria-describedby", err.id); }
    else box.removeAttribute("aria-invalid");
    return problem;
  }

  // ---- Context fields typed in place ------------------------------------

  // fieldInfo is the context fields the page knows (#context-fields), by
  // name: their legal values and description.
  let known = null;
  function fieldInfo() {
    if (known) return known;
    const el = document.getElementById("context-fields");
    known = {};
    try { for (const f of JSON.parse((el && el.textContent) || "[]") || []) known[f.name] = f; } catch (e) { known = {}; }
    return known;
  }

  // describeField says, under a typed context field, what the server knows
  // of it: its legal values, or that it is not defined, with the offer to
  // define it here.
  function describeField(input) {
    const row = input.closest("[data-item]");
    const hint = row && row.querySelector("[data-field-hint]");
    if (!hint) return;
    const name = input.value.trim();
    const define = row.querySelector("[data-define-field]");
    const f = fieldInfo()[name];
    const values = row.querySelector('input[name="values"]');
    if (values) values.setAttribute("list", f && f.legalValues && f.legalValues.length ? legalList(f) : "");
    if (!name) { hint.textContent = ""; define.hidden = true; return; }
    if (f) {
      const legal = (f.legalValues || []).map((l) => l.value);
      hint.textContent = legal.length ? "Legal values: " + legal.join(", ") + "." : (f.description || "Any value.");
      define.hidden = true;
    } else {
      hint.textContent = "“" + name + "” is not a defined context field. Constraints on it work; define it to describe it and list its legal values.";
      define.hidden = !document.getElementById("define-field"); // only for those who may define fields
      define.textContent = "Define “" + name + "”";
    }
  }

  // legalList makes (once) the datalist of a field's legal values.
  function legalList(f) {
    const id = "legal-" + f.name.replace(/[^A-Za-z0-9_-]/g, "_");
    if (!document.getElementById(id)) {
      const dl = document.createElement("datalist");
      dl.id = id;
      for (const l of f.legalValues) { const o = document.createElement("option"); o.value = l.value; dl.appendChild(o); }
      document.body.appendChild(dl);
    }
    return id;
  }

  // defineField opens the dialog that creates a context field, filled with
  // the typed name; the editor and what was typed in it stay as they are.
  let defining = null;
  function defineField(button) {
    const dialog = document.getElementById("define-field");
    if (!dialog) return;
    defining = button.closest("[data-item]").querySelector('input[name="contextName"]');
    const form = dialog.querySelector("form");
    form.reset();
    form.elements["name"].value = defining.value.trim();
    form.querySelector("[data-error]").textContent = "";
    dialog.showModal();
    form.elements["description"].focus();
  }

  async function saveField(form) {
    const box = form.querySelector("[data-error]");
    box.textContent = "";
    const body = {
      name: form.elements["name"].value.trim(),
      description: form.elements["description"].value,
      stickiness: form.elements["stickiness"].checked,
      legalValues: form.elements["legalValues"].value.split(",").map((s) => s.trim()).filter(Boolean).map((value) => ({ value })),
    };
    const res = await fetch(base + "/api/admin/context", {
      method: "POST", credentials: "same-origin",
      headers: { "Content-Type": "application/json", "Accept": "application/json", "X-CSRF-Token": meta("csrf-token") },
      body: JSON.stringify(body),
    });
    if (!res.ok) {
      let m = "The server answered " + res.status + ".";
      try { m = (await res.json()).message || m; } catch (e) { /* keep the status */ }
      box.textContent = m;
      return;
    }
    fieldInfo()[body.name] = body;
    const list = document.getElementById("context-field-names");
    if (list && !Array.from(list.options).some((o) => o.value === body.name)) {
      const o = document.createElement("option");
      o.value = body.name;
      o.label = body.name + (body.legalValues.length ? ": " + body.legalValues.map((l) => l.value).join(", ") : "");
      list.appendChild(o);
    }
    form.closest("dialog").close();
    if (defining) {
      document.querySelectorAll('input[name="contextName"]').forEach((i) => { if (i.value.trim() === body.name) describeField(i); });
      defining.focus();
    }
  }

  // ---- Events ------------------------------------------------------------

  // A form with an invalid JSON payload is not sent (app.js sends forms on
  // submit; this runs first).
  document.addEventListener("submit", (ev) => {
    const form = ev.target;
    if (form.id === "define-field-form") { ev.preventDefault(); ev.stopImmediatePropagation(); saveField(form); return; }
    let first = null;
    form.querySelectorAll(".variant-row").forEach((row) => {
      if (checkPayload(row) && !first) first = row.querySelector("[data-payload]");
    });
    if (first) {
      ev.preventDefault();
      ev.stopImmediatePropagation();
      const box = form.querySelector(":scope > [data-error]") || form.querySelector("[data-error]");
      if (box) box.textContent = "Not saved: a JSON payload is invalid (see the message under it).";
      first.focus();
    }
  }, true);

  // Rows added or removed rebalance their list, after app.js has done it.
  document.addEventListener("click", (ev) => {
    const el = ev.target.closest && ev.target.closest("button");
    if (!el) return;
    if (el.dataset.add === "variants" || (el.hasAttribute("data-remove") && el.closest(".variant-row"))) {
      const list = el.dataset.add ? el.closest("form").querySelector('[data-list="variants"]') : el.closest('[data-list="variants"]');
      setTimeout(() => balance(list), 0);
    } else if (el.hasAttribute("data-format-json")) {
      const row = el.closest("[data-item]");
      const box = row.querySelector("[data-payload]");
      if (!checkPayload(row) && box.value.trim()) { box.value = JSON.stringify(JSON.parse(box.value), null, 2); checkPayload(row); }
    } else if (el.hasAttribute("data-define-field")) {
      defineField(el);
    } else if (el.hasAttribute("data-close-dialog")) {
      el.closest("dialog").close();
    }
  }, true);

  document.addEventListener("input", (ev) => {
    const el = ev.target;
    if (el.matches("[data-share]") || el.matches('.variant-row input[name="name"]')) balance(el.closest('[data-list="variants"]'));
    else if (el.matches("[data-payload]")) checkPayload(el.closest("[data-item]"));
    else if (el.matches('input[name="contextName"][data-field-input]')) describeField(el);
  });

  document.addEventListener("change", (ev) => {
    const el = ev.target;
    if (el.matches("[data-weight-type]")) balance(el.closest('[data-list="variants"]'));
    else if (el.matches("[data-payload-type]")) checkPayload(el.closest("[data-item]"));
  });

  document.addEventListener("DOMContentLoaded", () => {
    document.querySelectorAll('[data-list="variants"]').forEach((list) => {
      const rows = Array.from(list.querySelectorAll(":scope > [data-item]"));
      const fixed = rows.filter((r) => r.querySelector("[data-weight-type]").value === "fix").reduce((n, r) => n + Number(r.querySelector('input[name="weight"]').value), 0);
      summarize(list, rows, fixed);
    });
    document.querySelectorAll('input[name="contextName"][data-field-input]').forEach(describeField);
  });
})();
