// The console's entry point: where the RCP endpoint is (config.json), the
// token (asked for on a 401, kept in this tab's sessionStorage only), the handshake,
// then one view per URL. Keyboard: "/" query, "j"/"k" hits, "n" next page, "g" + s/c/i/h
// views, "?" help.

import { h, replaceChildren } from "./dom.mjs";
import { RcpClient, RcpFailure } from "./rcp.mjs";
import { readState, writeState } from "./state.mjs";
import { renderCompare } from "./views/compare.mjs";
import { renderDocument } from "./views/document.mjs";
import { renderHealth } from "./views/health.mjs";
import { renderIndex } from "./views/index.mjs";
import { renderSearch } from "./views/search.mjs";

const TOKEN_KEY = "rcpkit-console-token";
const VIEWS = { search: renderSearch, compare: renderCompare, index: renderIndex, document: renderDocument, health: renderHealth };
const NAV = { s: "search", c: "compare", i: "index", h: "health" };

const main = document.getElementById("main");
const statusLine = document.getElementById("status");
const errorLine = document.getElementById("error");

const app = {
  config: null,
  client: null,
  info: null,
  navigate(state, { replace = false } = {}) {
    const url = `/ui${writeState(state)}`;
    if (replace) history.replaceState(null, "", url);
    else history.pushState(null, "", url);
    show();
  },
  busy(message) {
    statusLine.textContent = message || "";
  },
  fail(error) {
    errorLine.replaceChildren(h("p", {}, error.message));
    errorLine.hidden = false;
    if (error instanceof RcpFailure && error.kind === "auth" && error.status === 401) {
      sessionStorage.removeItem(TOKEN_KEY);
      askForToken(error.message);
    }
  },
};

async function boot() {
  app.config = await loadConfig();
  await connect();
}

async function loadConfig() {
  const response = await fetch("/ui/config.json", { credentials: "omit" });
  return response.json(); // {api, metrics}: written by whoever serves these files
}

async function connect() {
  app.client = new RcpClient(app.config.api, { token: sessionStorage.getItem(TOKEN_KEY) });
  app.busy("Connecting…");
  try {
    app.info = await app.client.initialize();
  } catch (error) {
    app.busy(null);
    if (error instanceof RcpFailure && error.status === 401) {
      const had = app.client.token !== null;
      sessionStorage.removeItem(TOKEN_KEY);
      askForToken(had ? error.message : "This server needs a token.");
      return;
    }
    app.fail(error);
    replaceChildren(main, h("p", { class: "notice" }, "The console could not start."));
    return;
  }
  app.busy(null);
  renderChrome();
  show();
}

function askForToken(message) {
  const form = h("form", { id: "token-form", onsubmit: (event) => {
    event.preventDefault();
    const token = form.elements.namedItem("token").value.trim();
    if (!token) return;
    sessionStorage.setItem(TOKEN_KEY, token); // this tab only, gone when it closes
    clearError();
    connect();
  } },
    h("h2", {}, "Sign in"),
    h("p", { id: "token-message", class: message.startsWith("The server refused") ? "error-text" : "" }, message),
    h("div", { class: "query-row" },
      h("label", { for: "token" }, "Token"),
      h("input", { id: "token", name: "token", type: "password", autocomplete: "off", required: true }),
      h("button", { type: "submit" }, "Use token")),
    h("p", { class: "hint" }, "The token is sent as Authorization: Bearer and kept in this tab's session storage only."));
  replaceChildren(main, form);
  form.querySelector("input").focus();
}

function renderChrome() {
  const name = document.getElementById("server-name");
  name.textContent = `${app.info.server?.name ?? "RCP server"} ${app.info.server?.version ?? ""} · ${app.info._meta?.conformance ?? ""}`;
  const signOut = document.getElementById("sign-out");
  signOut.hidden = !app.client.token;
  signOut.onclick = () => {
    sessionStorage.removeItem(TOKEN_KEY);
    location.assign("/ui");
  };
}

function show() {
  clearError();
  const state = readState(location.search);
  for (const link of document.querySelectorAll("nav a[data-view]")) {
    const current = link.dataset.view === state.view || (state.view === "document" && link.dataset.view === "index");
    if (current) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  document.title = `${state.q ? `${state.q} · ` : ""}${state.view} · rcpkit console`;
  replaceChildren(main, VIEWS[state.view](app, state));
}

function clearError() {
  errorLine.replaceChildren();
  errorLine.hidden = true;
}

// Links inside the console change the view without a reload (a reload works too).
document.addEventListener("click", (event) => {
  const link = event.target.closest?.("a[data-nav], nav a[data-view]");
  if (!link || event.ctrlKey || event.metaKey || event.shiftKey || !app.info) return;
  event.preventDefault();
  history.pushState(null, "", link.getAttribute("href"));
  show();
  main.focus();
});
window.addEventListener("popstate", () => app.info && show());

let pendingG = false;
document.addEventListener("keydown", (event) => {
  if (event.ctrlKey || event.metaKey || event.altKey) return;
  const typing = event.target.closest?.("input, select, textarea, [contenteditable]");
  if (event.key === "Escape" && typing) {
    event.target.blur();
    return;
  }
  if (typing) return;
  if (pendingG) {
    pendingG = false;
    if (NAV[event.key] && app.info) {
      event.preventDefault();
      app.navigate({ view: NAV[event.key], filters: [] });
    }
    return;
  }
  const hits = [...document.querySelectorAll("article.hit")];
  const at = hits.indexOf(document.activeElement);
  if (event.key === "/") {
    event.preventDefault();
    document.getElementById("q")?.focus();
  } else if (event.key === "j" || event.key === "k") {
    const next = event.key === "j" ? Math.min(hits.length - 1, at + 1) : Math.max(0, at - 1);
    hits[next]?.focus();
  } else if (event.key === "n") {
    document.getElementById("next-page")?.click();
  } else if (event.key === "g") {
    pendingG = true;
  } else if (event.key === "?") {
    const help = document.getElementById("help");
    help.open ? help.close() : help.showModal();
  }
});

boot().catch((error) => app.fail(error));
