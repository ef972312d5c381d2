// Bunting web UI: every change is one admin API call made from here, as
// JSON with the session's CSRF token; the server decides and records it.
(function () {
  "use strict";
  const meta = (n) => (document.querySelector('meta[name="' + n + '"]') || {}).content || "";
  const base = meta("base-path");
  // With this script running, narrow screens fold the navigation behind
  // the menu button (without it, the navigation simply stays open).
  document.documentElement.classList.add("js");
  document.addEventListener("click", (ev) => {
    const btn = ev.target.closest("[data-menu]");
    if (!btn) return;
    const open = btn.getAttribute("aria-expanded") !== "true";
    btn.setAttribute("aria-expanded", String(open));
    btn.closest(".top").classList.toggle("open", open);
  });

  // versionFor finds the version this page shows of the flag or segment
  // that url changes: an element with data-etag (the version the server
  // gave when it drew the page) and data-scope (the object's API URLs).
  function versionFor(url) {
    for (const el of document.querySelectorAll("[data-etag][data-scope]")) {
      for (const scope of el.dataset.scope.split(" ")) {
        if (scope && (url === scope || url.startsWith(scope + "/") || url.startsWith(scope + "?"))) return el;
      }
    }
    return null;
  }

  // reviewEnvs are the environments where changes need a change request,
  // by project, as the page says (#review-envs).
  function reviewEnvs() {
    const el = document.getElementById("review-envs");
    try { return el ? JSON.parse(el.dataset.review || "{}") || {} : {}; } catch (e) { return {}; }
  }

  // asChange turns a direct change of a flag in an environment where
  // change requests are on into a change of the visitor's draft: the
  // admin route's body becomes the change's payload ("Review required").
  // It returns null for every other call.
  function asChange(method, url, body) {
    const m = /\/api\/admin\/projects\/([^/]+)\/features\/([^/?]+)(\/[^?]*)?$/.exec(url.split("?")[0]);
    if (!m) return null;
    const project = decodeURIComponent(m[1]), feature = decodeURIComponent(m[2]), rest = m[3] || "";
    const envs = reviewEnvs()[project] || [];
    if (!envs.length) return null;
    let env = envs[0], action = null, payload;
    const e = /^\/environments\/([^/]+)(\/.*)?$/.exec(rest);
    if (e) {
      env = decodeURIComponent(e[1]);
      if (!envs.includes(env)) return null;
      const tail = e[2] || "";
      const strategy = /^\/strategies\/([^/]+)$/.exec(tail);
      if (method === "POST" && (tail === "/on" || tail === "/off")) { action = "updateEnabled"; payload = { enabled: tail === "/on" }; }
      else if (method === "POST" && tail === "/strategies") { action = "addStrategy"; payload = body; }
      else if (method === "POST" && tail === "/strategies/set-sort-order") { action = "reorderStrategy"; payload = body; }
      else if (method === "PUT" && strategy && strategy[1] !== "set-sort-order") { action = "updateStrategy"; payload = Object.assign({}, body, { id: decodeURIComponent(strategy[1]) }); }
      else if (method === "DELETE" && strategy) { action = "deleteStrategy"; payload = { id: decodeURIComponent(strategy[1]) }; }
      else if (method === "PUT" && tail === "/variants") { action = "patchVariant"; payload = { variants: body }; }
      else return null;
    } else if (method === "DELETE" && rest === "") { action = "archiveFeature"; }
    else if (method === "POST" && rest === "/dependencies") { action = "addDependency"; payload = body; }
    else if (method === "DELETE" && /^\/dependencies(\/[^/]+)?$/.test(rest)) {
      action = "deleteDependency";
      const parent = rest.split("/")[2];
      if (parent) payload = { feature: decodeURIComponent(parent) };
    } else return null;
    const change = { feature, action };
    if (payload !== undefined) change.payload = payload;
    return { url: base + "/api/admin/projects/" + encodeURIComponent(project) + "/environments/" + encodeURIComponent(env) + "/change-requests", change };
  }

  // api makes one admin API call. A change to a flag or segment that the
  // page shows carries its version as If-Match, so that the server refuses
  // it (412) if someone else changed the object meanwhile; a successful
  // change answers with the new version, which the page keeps.
  async function api(method, url, body) {
    const draft = method === "GET" ? null : asChange(method, url, body);
    if (draft) { method = "POST"; url = draft.url; body = draft.change; }
    const headers = { "X-CSRF-Token": meta("csrf-token"), "Accept": "application/json" };
    const init = { method, headers, credentials: "same-origin" };
    const version = method === "GET" ? null : versionFor(url);
    if (version && version.dataset.etag) headers["If-Match"] = version.dataset.etag;
    if (body !== undefined) {
      headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    const res = await fetch(url, init);
    if (res.ok && version && res.headers.get("ETag")) version.dataset.etag = res.headers.get("ETag");
    let data = null;
    const text = await res.text();
    try { data = text ? JSON.parse(text) : null; } catch (e) { data = { message: text }; }
    if (res.status === 401 && !url.endsWith("/auth/simple/login")) {
      location.href = base + "/login?next=" + encodeURIComponent(location.pathname + location.search);
    }
    return { ok: res.ok, status: res.status, data, drafted: !!draft };
  }

  // drafted tells that a change went into the visitor's draft, and shows
  // the page again with its banner.
  function drafted(r) {
    sessionStorage.setItem("bunting-toast", "Added to your draft change request #" + (r.data && r.data.id) + " in " + (r.data && r.data.environment) + ": it applies once another person approves it.");
    location.reload();
  }

  function message(r) {
    const m = (r.data && r.data.message) || ("The server answered " + r.status + ".");
    if (r.status === 409) return "Conflict: " + m + " Someone may have changed this meanwhile; reload to see the latest.";
    return m;
  }

  function setPath(obj, path, value) {
    const parts = path.split(".");
    let o = obj;
    for (let i = 0; i < parts.length - 1; i++) o = o[parts[i]] = o[parts[i]] || {};
    o[parts[parts.length - 1]] = value;
  }

  const SKIP = {};
  function valueOf(el) {
    const t = el.dataset.type;
    if (el.type === "checkbox") return el.checked;
    if (el.multiple) {
      const vals = Array.from(el.selectedOptions).map((o) => o.value);
      if (t === "ids") return vals.map((v) => ({ id: Number(v) }));
      if (t === "members") return vals.map((v) => ({ user: { id: Number(v) } }));
      return t === "numbers" ? vals.map(Number) : vals;
    }
    const v = el.value;
    if (v === "" && el.hasAttribute("data-optional")) return SKIP;
    if (t === "bool") return v === "true"; // a hidden field's state
    if (t === "number") return v === "" ? SKIP : Number(v);
    if (t === "number-or-null") return v === "" ? null : Number(v);
    if (t === "list") return v.split(",").map((s) => s.trim()).filter((s) => s !== "");
    if (t === "json") return v === "" ? SKIP : JSON.parse(v);
    if (t === "date") return v === "" ? SKIP : v + "T23:59:59Z"; // the end of that day, UTC
    if (t === "datetime") return v === "" ? SKIP : new Date(v).toISOString(); // the browser's local time
    return v;
  }

  function collectInto(out, els) {
    for (const el of els) {
      if (!el.name || el.disabled || el.closest("fieldset:disabled")) continue;
      const v = valueOf(el);
      if (v !== SKIP) setPath(out, el.name, v);
    }
    return out;
  }

  function collect(form) {
    const out = {};
    collectInto(out, Array.from(form.elements).filter((el) => !el.closest("[data-item]")));
    // Permission checkboxes (the roles screen): the checked ones, each
    // with its environment when it has one.
    for (const box of form.querySelectorAll("[data-permissions]")) {
      out[box.dataset.permissions] = Array.from(box.querySelectorAll("input[data-perm]:checked:not(:disabled)")).map((c) =>
        c.dataset.env ? { name: c.dataset.perm, environment: c.dataset.env } : { name: c.dataset.perm });
    }
    for (const list of form.querySelectorAll("[data-list]")) {
      if (list.closest("fieldset:disabled")) continue;
      const items = Array.from(list.querySelectorAll(":scope > [data-item]")).map((item) => {
        const o = collectInto({}, item.querySelectorAll("[name]"));
        if (o.payload && (o.payload.value === undefined || o.payload.type === undefined)) delete o.payload;
        return o;
      });
      setPath(out, list.dataset.list, list.dataset.keyBy ? keyed(items, list.dataset.keyBy) : items);
    }
    return out;
  }

  // keyed turns list items into an object keyed by one of their fields
  // (for maps such as an action set's payload filters).
  function keyed(items, key) {
    const out = {};
    for (const it of items) { const k = it[key]; delete it[key]; out[k] = it; }
    return out;
  }

  function clearErrors(form) {
    form.querySelectorAll(".field-error").forEach((e) => e.remove());
    form.querySelectorAll("[aria-invalid]").forEach((e) => e.removeAttribute("aria-invalid"));
    const box = form.querySelector("[data-error]");
    if (box) { box.textContent = ""; box.classList.remove("conflict"); }
  }

  // failed shows a refused change: a conflict (412) with its reload offer,
  // anything else next to the form's fields or as a toast.
  function failed(r, form) {
    if (r.status === 412) conflict(r, form);
    else if (form) showError(form, message(r));
    else toast(message(r));
  }

  // conflict shows that someone changed this flag or segment since the page
  // was drawn, where the change was asked (the form's error box, else a
  // banner on top of the page), with a button that reloads the page and
  // puts the form's unsaved input back (keepInput, restoreInput). The
  // form keeps what was typed until then.
  function conflict(r, form) {
    let box = form && form.querySelector("[data-error]");
    if (!box) {
      box = document.getElementById("conflict") || document.createElement("div");
      box.id = "conflict";
      box.setAttribute("role", "alert");
      document.getElementById("main").prepend(box);
    }
    box.classList.add("conflict");
    box.textContent = "";
    const text = document.createElement("span");
    text.textContent = message(r) + " ";
    const reload = document.createElement("button");
    reload.type = "button";
    reload.dataset.reloadKeeping = "";
    reload.textContent = form ? "Reload, keeping what I typed" : "Reload";
    box.append(text, reload);
    box.scrollIntoView({ block: "nearest" });
  }

  const UNSAVED = "bunting-unsaved-input";

  // keepInput saves a form's fields for restoreInput after a reload.
  function keepInput(form) {
    const lists = {};
    form.querySelectorAll("[data-list]").forEach((l) => { lists[l.dataset.list] = l.querySelectorAll(":scope > [data-item]").length; });
    const fields = Array.from(form.elements).filter((el) => el.name).map((el) =>
      el.type === "checkbox" ? el.checked : el.multiple ? Array.from(el.selectedOptions).map((o) => o.value) : el.value);
    const index = Array.from(document.querySelectorAll("form[data-api]")).indexOf(form);
    sessionStorage.setItem(UNSAVED, JSON.stringify({ page: location.pathname, index, api: form.dataset.api, lists, fields }));
  }

  // restoreInput puts back the input keepInput saved, in the same form of
  // the reloaded page, and opens it.
  function restoreInput() {
    let saved = null;
    try { saved = JSON.parse(sessionStorage.getItem(UNSAVED) || "null"); } catch (e) { saved = null; }
    sessionStorage.removeItem(UNSAVED);
    if (!saved || saved.page !== location.pathname) return;
    const form = document.querySelectorAll("form[data-api]")[saved.index];
    if (!form || form.dataset.api !== saved.api) return;
    for (const [name, n] of Object.entries(saved.lists)) {
      const list = form.querySelector('[data-list="' + name + '"]');
      const tpl = form.querySelector('template[data-template="' + name + '"]');
      if (!list || !tpl) continue;
      const items = list.querySelectorAll(":scope > [data-item]");
      for (let i = items.length; i > n; i--) items[i - 1].remove();
      for (let i = items.length; i < n; i++) list.appendChild(tpl.content.cloneNode(true));
    }
    const els = Array.from(form.elements).filter((el) => el.name);
    els.forEach((el, i) => {
      const v = saved.fields[i];
      if (v === undefined) return;
      if (el.type === "checkbox") el.checked = v;
      else if (el.multiple) Array.from(el.options).forEach((o) => { o.selected = v.includes(o.value); });
      else el.value = v;
    });
    const details = form.closest("details");
    if (details) details.open = true;
    const box = form.querySelector("[data-error]");
    if (box) box.textContent = "Your input is back. The page now shows the other change: check it, then save again.";
    form.scrollIntoView({ block: "center" });
  }

  // showError puts the API's message next to the field it names (the
  // ValidationError messages name properties in backticks), else on top.
  function showError(form, text) {
    const m = /`([A-Za-z0-9_.]+)`/.exec(text);
    const field = m && form.querySelector('[name="' + m[1] + '"]');
    if (field) {
      const p = document.createElement("p");
      p.className = "field-error";
      p.id = (field.id || field.name.replace(/\W/g, "-")) + "-error";
      p.textContent = text;
      field.setAttribute("aria-invalid", "true");
      field.setAttribute("aria-describedby", p.id);
      (field.closest("label") || field).after(p);
      field.focus();
      return;
    }
    const box = form.querySelector("[data-error]");
    if (box) box.textContent = text; else alert(text);
  }

  function fill(template, form) {
    return template.replace(/\{(\w+)\}/g, (_, k) => encodeURIComponent((form.elements[k] || {}).value || ""));
  }

  function getPath(obj, path) {
    return path.split(".").reduce((o, k) => (o == null ? undefined : o[k]), obj);
  }

  // localPath returns url when it is a page of this server under the base
  // path, read as the browser reads a URL (\ is /, TAB, LF and CR dropped,
  // controls and spaces trimmed) and again after each percent-decoding:
  // starting with base + "/", no "//", "." or ".." in its path. Anything
  // else (another host, a scheme such as javascript:) becomes the flags
  // list. The server checks the same (webui.LocalNext); this is the
  // second check, before navigating.
  function localPath(url) {
    const read = (s) => s.replace(/^[\x00-\x20\x7f]+|[\x00-\x20\x7f]+$/g, "").replace(/[\x00-\x1f\x7f]/g, "").replace(/\\/g, "/");
    const under = (s) => {
      const p = s.split(/[?#]/)[0];
      return p.startsWith(base + "/") && !p.includes("//") && !p.split("/").some((seg) => seg === "." || seg === "..");
    };
    const view = read(String(url));
    let s = view;
    for (let i = 0; i < 5; i++) {
      if (!under(s)) break;
      let d;
      try { d = read(decodeURIComponent(s)); } catch (e) { break; }
      if (d === s) return view;
      s = d;
    }
    return base + "/flags";
  }

  window.buntingLocalPath = localPath; // for the browser tests

  function then(where, r, form) {
    if (!where) return;
    if (where === "reload") { location.reload(); return; }
    if (where === "show-secret") {
      const box = form.querySelector("[data-secret]");
      box.hidden = false;
      box.querySelector("output").textContent = getPath(r.data, box.dataset.secret || "secret");
      return;
    }
    if (where.startsWith("toast:")) { toast(getPath(r.data, where.slice(6))); return; }
    location.href = localPath(form ? fill(where, form) : where);
  }

  document.addEventListener("submit", async (ev) => {
    const form = ev.target.closest("form[data-api]");
    if (!form) return;
    ev.preventDefault();
    clearErrors(form);
    let body;
    try { body = collect(form); } catch (e) { showError(form, "Invalid JSON: " + e.message); return; }
    const url = fill(form.dataset.api, form);
    for (const f of (form.dataset.pathFields || "").split(",")) if (f) delete body[f];
    if (form.dataset.bodyField) body = body[form.dataset.bodyField] || [];
    const button = form.querySelector('[type="submit"]');
    if (button) button.disabled = true;
    try {
      const r = await api(form.dataset.method || "POST", url, body);
      if (!r.ok) { failed(r, form); return; }
      if (r.drafted) { drafted(r); return; }
      then(form.dataset.then, r, form);
    } finally {
      if (button) button.disabled = false;
    }
  });

  document.addEventListener("click", async (ev) => {
    const el = ev.target.closest("button");
    if (!el) return;
    if (el.dataset.call !== undefined) {
      if (el.dataset.confirm && !confirm(el.dataset.confirm)) return;
      let body;
      if (el.dataset.body) {
        body = JSON.parse(el.dataset.body);
        if (el.dataset.set) Object.assign(body, JSON.parse(el.dataset.set));
        if (el.dataset.drop) delete body[el.dataset.drop];
      }
      const r = await api(el.dataset.method || "POST", el.dataset.call, body);
      if (!r.ok) { failed(r); return; }
      if (r.drafted) { drafted(r); return; }
      if (el.dataset.refocus) sessionStorage.setItem("bunting-refocus", el.dataset.refocus);
      then(el.dataset.then, r);
    } else if (el.hasAttribute("data-reload-keeping")) {
      const form = el.closest("form");
      if (form) keepInput(form);
      location.reload();
    } else if (el.dataset.add) {
      const form = el.closest("form");
      const tpl = form.querySelector('template[data-template="' + el.dataset.add + '"]');
      const list = form.querySelector('[data-list="' + el.dataset.add + '"]');
      list.appendChild(tpl.content.cloneNode(true));
      list.lastElementChild.querySelectorAll("[data-shows]").forEach(shownFor);
      const first = list.lastElementChild && list.lastElementChild.querySelector("input, select");
      if (first) first.focus();
    } else if (el.hasAttribute("data-remove")) {
      el.closest("[data-item]").remove();
    } else if (el.dataset.signout) {
      const r = await api("POST", base + (el.dataset.signout === "everywhere" ? "/auth/logout-everywhere" : "/auth/logout"));
      if (!r.ok && r.status !== 401) { toast(message(r)); return; }
      // Single sign-out: the identity provider ends its session too.
      location.href = (r.data && r.data.redirectUrl) || base + "/login";
    } else if (el.dataset.copy) {
      const text = document.querySelector(el.dataset.copy).textContent;
      try { await navigator.clipboard.writeText(text); el.textContent = "Copied"; } catch (e) { toast("Copy failed: select the secret and copy it by hand."); }
    } else if (el.dataset.passwordLink) {
      const r = await api("POST", el.dataset.passwordLink, { id: el.dataset.who });
      if (!r.ok) { toast(message(r)); return; }
      prompt("One-time link with which " + el.dataset.who + " sets a password (valid for a day; pass it on):", r.data.resetPasswordUrl);
    } else if (el.dataset.resetPassword) {
      const pw = prompt("New password (at least 8 characters):");
      if (!pw) return;
      const r = await api("POST", el.dataset.resetPassword, { password: pw });
      toast(r.ok ? "Password reset; their sessions have ended." : message(r));
    }
  });

  document.addEventListener("change", async (ev) => {
    const el = ev.target;
    if (el.dataset && el.dataset.switch) {
      const on = el.checked;
      el.disabled = true;
      const r = await api("POST", el.dataset.switch + (on ? "/on" : "/off"));
      el.disabled = false;
      if (!r.ok) { el.checked = !on; failed(r); } else if (r.drafted) { el.checked = !on; drafted(r); }
    } else if (el.dataset && el.dataset.putField) {
      const r = await api("PUT", el.dataset.url, { [el.dataset.putField]: el.value });
      if (r.ok) toast("Saved."); else failed(r);
    } else if (el.matches && el.matches("[data-strategy-select]")) {
      strategyFields(el);
    } else if (el.matches && el.matches("[data-shows]")) {
      shownFor(el);
    }
  });

  function strategyFields(select) {
    const form = select.closest("form");
    form.querySelectorAll("fieldset[data-for-strategy]").forEach((fs) => {
      const mine = fs.dataset.forStrategy === select.value;
      fs.disabled = !mine;
      fs.hidden = !mine;
    });
  }

  // shownFor shows, in the select's list item (or form), the labels whose
  // data-shown-for lists the chosen value, and disables the others' fields
  // so they are not sent.
  function shownFor(select) {
    const scope = select.closest("[data-item]") || select.form;
    scope.querySelectorAll("[data-shown-for]").forEach((label) => {
      const mine = label.dataset.shownFor.split(" ").includes(select.value);
      label.hidden = !mine;
      label.querySelectorAll("input, select").forEach((f) => { f.disabled = !mine; });
    });
  }

  let nameTimer;
  document.addEventListener("input", (ev) => {
    const el = ev.target;
    if (!el.dataset || !el.dataset.checkName) return;
    clearTimeout(nameTimer);
    const out = document.getElementById(el.getAttribute("aria-describedby"));
    nameTimer = setTimeout(async () => {
      const name = el.value;
      if (!name) { out.textContent = ""; return; }
      if (!/^[A-Za-z0-9_.~-]+$/.test(name)) { out.textContent = "Use only letters, digits and - _ . ~"; out.className = "hint bad"; return; }
      let taken = false;
      for (const archived of ["false", "true"]) {
        const r = await api("GET", el.dataset.checkName + "?limit=200&archived=" + archived + "&query=" + encodeURIComponent(name));
        if (r.ok && r.data.features.some((f) => f.name === name)) taken = true;
      }
      if (el.value !== name) return;
      out.textContent = taken ? "“" + name + "” is taken (flag names are unique across projects, archived ones included)." : "“" + name + "” is available.";
      out.className = taken ? "hint bad" : "hint good";
    }, 200);
  });

  function toast(text) {
    let t = document.getElementById("toast");
    if (!t) {
      t = document.createElement("div");
      t.id = "toast";
      t.setAttribute("role", "status");
      document.body.appendChild(t);
    }
    t.textContent = text;
    t.hidden = false;
    clearTimeout(t.timer);
    t.timer = setTimeout(() => { t.hidden = true; }, 6000);
  }

  function init() {
    restoreInput();
    const note = sessionStorage.getItem("bunting-toast");
    sessionStorage.removeItem("bunting-toast");
    if (note) toast(note);
    document.querySelectorAll("[data-strategy-select]").forEach(strategyFields);
    document.querySelectorAll("[data-shows]").forEach(shownFor);
    scrollersFocusable();
    // After a reload a button asked for, focus returns to it (or the first
    // of its listed stand-ins), so keyboard users keep their place.
    const refocus = sessionStorage.getItem("bunting-refocus");
    sessionStorage.removeItem("bunting-refocus");
    const target = refocus && refocus.split(" ").map((id) => document.getElementById(id)).find(Boolean);
    if (target) target.focus();
  }
  // scrollersFocusable lets keyboard users scroll what is wider than the
  // screen (a table on a phone): such a box takes focus, then arrow keys.
  function scrollersFocusable() {
    document.querySelectorAll("main .scroll, main table, main pre").forEach((el) => {
      if (el.scrollWidth > el.clientWidth + 1 && getComputedStyle(el).overflowX !== "visible" && !el.hasAttribute("tabindex")) el.tabIndex = 0;
    });
  }
  addEventListener("resize", scrollersFocusable);
  document.addEventListener("htmx:afterSettle", scrollersFocusable);
  document.addEventListener("DOMContentLoaded", init);
  document.addEventListener("htmx:configRequest", (ev) => { ev.detail.headers["X-CSRF-Token"] = meta("csrf-token"); });
})();
