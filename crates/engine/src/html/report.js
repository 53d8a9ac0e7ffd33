// lineage's report: draws the data block into the page. Page text goes in
// as text nodes only (textContent), never as markup. The views follow the
// address's fragment, so a link to a passage is an ordinary link:
//   #documents                the pages, sortable and filterable
//   #sort=-fresh&filter=v2    the same, sorted (- for descending) and
//                             filtered: a list to send a colleague
//   #page=N                   page N's text, its passages by origin
//   #page=N&at=S-E            the same, passage S-E (UTF-16 units) marked
//   #clusters, #pair=I        the clusters, and pair I side by side
"use strict";
(function () {
  const data = JSON.parse(document.getElementById("data").textContent);
  const main = document.getElementById("main");
  const pages = data.pages;
  const COLOURS = 8;

  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v !== null && v !== undefined) e.setAttribute(k, v);
    }
    for (const c of children) {
      if (c === null || c === undefined) continue;
      e.append(typeof c === "string" ? document.createTextNode(c) : c);
    }
    return e;
  }
  const pct = (v) => (v === null || v === undefined ? "" : v.toFixed(1));
  const name = (i) => pages[i].path + (pages[i].live ? "" : " v" + pages[i].version);
  const link = (i) => el("a", { href: "#page=" + i }, name(i));

  // The header: the table's regime and the settings.
  document.getElementById("regime").textContent = data.regime ? "table: " + data.regime : "";
  document.getElementById("settings").textContent =
    data.settings.filter(([, v]) => v !== "").map(([k, v]) => k + " " + v).join(" · ") +
    " · changed against the " + data.basis +
    " · near duplicates at " + data.min_similarity;

  // Documents: one row per live page.
  const columns = [
    { key: "path", label: "page", get: (p) => p.path, text: true },
    { key: "tokens", label: "tokens", get: (p) => p.tokens },
    { key: "fresh", label: "fresh %", get: (p) => p.fresh },
    { key: "changed", label: "changed %", get: (p) => p.changed },
    { key: "removed", label: "removed %", get: (p) => p.removed, wide: true },
    { key: "dominant", label: "dominant origin", get: (p) => (p.dominant ? name(p.dominant[0]) : ""), text: true },
    { key: "cluster", label: "cluster", get: (p) => p.cluster, wide: true },
  ];
  const state = { sort: null, desc: false, filter: "" };

  // The list's sort and filter kept in the address, so it can be sent.
  function keepState() {
    const h = new URLSearchParams();
    if (state.sort) h.set("sort", (state.desc ? "-" : "") + state.sort);
    if (state.filter) h.set("filter", state.filter);
    const hash = h.toString() ? "#" + h.toString() : "#documents";
    if (hash !== location.hash) history.replaceState(null, "", hash);
  }

  // A filter: words the path holds, and bounds on the shares
  // (fresh<10, changed>=20, removed>0, tokens>1000), all of them.
  function parseFilter(text) {
    const words = [], bounds = [];
    for (const term of text.toLowerCase().split(/\s+/).filter(Boolean)) {
      const m = /^(fresh|changed|removed|tokens)(<=|>=|<|>|=)(\d+(?:\.\d+)?)$/.exec(term);
      if (m) bounds.push([m[1], m[2], parseFloat(m[3])]);
      else words.push(term);
    }
    return (p) =>
      words.every((w) => p.path.toLowerCase().includes(w)) &&
      bounds.every(([k, op, v]) => {
        const x = p[k];
        if (x === null || x === undefined) return false;
        return op === "<" ? x < v : op === ">" ? x > v : op === "<=" ? x <= v : op === ">=" ? x >= v : x === v;
      });
  }

  function documents() {
    const input = el("input", {
      id: "filter", type: "search", value: state.filter,
      placeholder: "filter: words of the path, fresh<10, changed>=20, removed>0",
      "aria-label": "filter the pages",
    });
    const head = el("tr", {});
    for (const c of columns) {
      const th = el("th", { "data-key": c.key, class: c.wide ? "wide" : null }, c.label);
      if (state.sort === c.key) th.setAttribute("aria-sort", state.desc ? "descending" : "ascending");
      th.addEventListener("click", () => {
        state.desc = state.sort === c.key ? !state.desc : !c.text;
        state.sort = c.key;
        keepState();
        render();
      });
      head.append(th);
    }
    const body = el("tbody", { id: "rows" });
    const count = el("p", { id: "count", class: "muted" });
    const fill = () => {
      const keep = parseFilter(state.filter);
      const rows = [];
      pages.forEach((p, i) => { if (p.live && keep(p)) rows.push(i); });
      const col = columns.find((c) => c.key === state.sort);
      if (col) {
        rows.sort((a, b) => {
          const x = col.get(pages[a]), y = col.get(pages[b]);
          const nx = x === null || x === undefined || x === "", ny = y === null || y === undefined || y === "";
          if (nx || ny) return nx - ny;
          const o = col.text ? String(x).localeCompare(String(y)) : x - y;
          return state.desc ? -o : o;
        });
      }
      body.replaceChildren(...rows.map((i) => {
        const p = pages[i];
        return el("tr", { "data-page": i },
          el("td", { class: "path" }, link(i)),
          el("td", { class: "num" }, String(p.tokens)),
          el("td", { class: "num" }, pct(p.fresh)),
          el("td", { class: "num" }, pct(p.changed)),
          el("td", { class: "num wide" }, pct(p.removed)),
          el("td", { class: "origin" }, p.dominant ? link(p.dominant[0]) : "", p.dominant ? " " + pct(p.dominant[1]) + " %" : ""),
          el("td", { class: "num wide" }, p.cluster === null ? "" : el("a", { href: "#clusters" }, "#" + (p.cluster + 1))));
      }));
      const live = pages.filter((p) => p.live).length;
      count.textContent = rows.length + " of " + live + " pages";
    };
    input.addEventListener("input", () => { state.filter = input.value; keepState(); fill(); });
    fill();
    return [input, count, el("table", { id: "pages" }, el("thead", {}, head), body)];
  }

  // A text with its ranges marked: `ranges` are [start, end, make], each
  // make(text) giving the element for that stretch; ranges do not overlap.
  function marked(text, ranges) {
    const pre = el("pre", { class: "text" });
    let at = 0;
    for (const [s, e, make] of ranges.slice().sort((a, b) => a[0] - b[0])) {
      if (s < at) continue;
      if (s > at) pre.append(document.createTextNode(text.slice(at, s)));
      pre.append(make(text.slice(s, e)));
      at = e;
    }
    if (at < text.length) pre.append(document.createTextNode(text.slice(at)));
    return pre;
  }

  function page(i, at) {
    const p = pages[i];
    const out = [el("h2", {}, name(i) + (p.live ? "" : " (an earlier version, or a deleted page)"))];
    const facts = [p.tokens + " tokens", pct(p.fresh) + " % fresh"];
    if (p.changed !== null) facts.push(pct(p.changed) + " % changed");
    if (p.removed !== null) facts.push(pct(p.removed) + " % removed");
    out.push(el("p", { class: "muted" }, facts.join(" · "), p.base !== null ? " against " : "", p.base !== null ? link(p.base) : ""));
    // The legend: each origin's share of the page, most first.
    const share = new Map();
    for (const [s, e, o] of p.runs) share.set(o, (share.get(o) || 0) + (e - s));
    const origins = [...share.entries()].sort((a, b) => b[1] - a[1]);
    const colour = new Map(origins.map(([o], n) => [o, n % COLOURS]));
    const text = p.text === null ? null : data.texts[p.text];
    if (origins.length && text !== null) {
      out.push(el("ul", { class: "legend" }, ...origins.map(([o, n]) =>
        el("li", {}, el("span", { class: "swatch c" + colour.get(o) }), link(o),
          " " + pct(100 * n / Math.max(1, text.length)) + " % of the text"))));
    }
    if (text === null) {
      out.push(el("p", {}, "Its text is not kept in the index."));
      return out;
    }
    const ranges = p.runs.map(([s, e, o, ts, te]) => [s, e, (t) => el("a", {
      class: "run c" + colour.get(o),
      href: "#page=" + o + (ts >= 0 ? "&at=" + ts + "-" + te : ""),
      title: "from " + name(o),
    }, t)]);
    if (at) {
      // The passage asked for, marked over whatever else stands there.
      const [s, e] = at;
      const rest = ranges.filter(([rs, re]) => re <= s || rs >= e);
      rest.push([s, e, (t) => el("mark", { id: "target" }, t)]);
      out.push(marked(text, rest));
    } else {
      out.push(marked(text, ranges));
    }
    return out;
  }

  function clusters() {
    const out = [el("h2", {}, "Near-duplicate clusters")];
    if (!data.clusters.length) {
      out.push(el("p", {}, "No two live pages resemble each other at " + data.min_similarity + " or more."));
      return out;
    }
    data.clusters.forEach((members, c) => {
      const pairs = [];
      data.pairs.forEach((pr, n) => { if (pages[pr.a].cluster === c) pairs.push(n); });
      out.push(el("section", { id: "cluster-" + (c + 1) },
        el("h3", {}, "#" + (c + 1) + ": " + members.length + " pages"),
        el("ul", {}, ...pairs.map((n) => el("li", {},
          el("a", { href: "#pair=" + n, class: "pair" }, name(data.pairs[n].a) + " ↔ " + name(data.pairs[n].b)),
          " " + data.pairs[n].similarity.toFixed(3))))));
    });
    return out;
  }

  function pair(n) {
    const pr = data.pairs[n];
    const side = (i, shared) => {
      const p = pages[i];
      const text = p.text === null ? "" : data.texts[p.text];
      return el("div", {}, el("h3", {}, link(i)),
        marked(text, shared.map(([s, e]) => [s, e, (t) => el("mark", {}, t)])));
    };
    return [el("h2", {}, "Side by side: resemblance " + pr.similarity.toFixed(3)),
      el("div", { class: "compare" }, side(pr.a, pr.shared_a), side(pr.b, pr.shared_b))];
  }

  function render() {
    const h = new URLSearchParams(location.hash.slice(1));
    let view;
    if (h.has("page") && pages[+h.get("page")]) {
      const at = /^(\d+)-(\d+)$/.exec(h.get("at") || "");
      view = page(+h.get("page"), at ? [+at[1], +at[2]] : null);
    } else if (h.has("pair") && data.pairs[+h.get("pair")]) {
      view = pair(+h.get("pair"));
    } else if (location.hash === "#clusters") {
      view = clusters();
    } else {
      const sort = h.get("sort");
      if (sort && columns.some((c) => c.key === sort.replace(/^-/, ""))) {
        state.desc = sort.startsWith("-");
        state.sort = sort.replace(/^-/, "");
      }
      if (h.has("filter")) state.filter = h.get("filter");
      view = documents();
    }
    main.replaceChildren(...view);
    const target = document.getElementById("target");
    if (target) target.scrollIntoView({ block: "center" });
  }
  window.addEventListener("hashchange", render);
  render();
  // When the first view was drawn, in ms since the page began to load.
  document.body.dataset.ready = String(Math.round(performance.now()));
})();
