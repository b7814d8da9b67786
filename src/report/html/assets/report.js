// The league report's script: sortable tables, the views (main, bot page,
// game list, game viewer) chosen by the URL fragment, and the boards of the
// five games drawn in SVG from the positions the arena replayed. It knows
// no rule of any game: every position comes from the engine.
//
// Data files are scripts calling arenaIndex(...) and arenaGames(...), loaded
// with <script> elements: fetch() of local files is blocked under file://.
(function () {
  "use strict";

  // ---- errors: shown on the page (and so seen by the tests) -------------
  const errorBox = document.getElementById("errors");
  function showError(msg) {
    errorBox.hidden = false;
    const p = document.createElement("p");
    p.className = "js-error";
    p.textContent = msg;
    errorBox.appendChild(p);
  }
  window.addEventListener("error", (e) => showError("script error: " + e.message));
  window.addEventListener("unhandledrejection", (e) =>
    showError("script error: " + (e.reason && e.reason.message ? e.reason.message : e.reason))
  );

  // ---- small helpers ------------------------------------------------------
  const SVG = "http://www.w3.org/2000/svg";
  function h(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    setAttrs(e, attrs);
    append(e, kids);
    return e;
  }
  function s(tag, attrs, ...kids) {
    const e = document.createElementNS(SVG, tag);
    setAttrs(e, attrs);
    append(e, kids);
    return e;
  }
  function setAttrs(e, attrs) {
    for (const k in attrs || {}) {
      const v = attrs[k];
      if (v === null || v === undefined || v === false) continue;
      if (k === "text") e.textContent = v;
      else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v === true ? "" : v);
    }
  }
  function append(e, kids) {
    for (const k of kids.flat(Infinity)) {
      if (k === null || k === undefined || k === false) continue;
      e.appendChild(typeof k === "object" ? k : document.createTextNode(String(k)));
    }
  }
  function setChildren(e, ...kids) {
    e.replaceChildren();
    append(e, kids);
  }
  function frag(v) {
    return encodeURIComponent(v);
  }
  function ms(us) {
    if (!us) return "–";
    if (us < 1000) return us + " µs";
    if (us < 1e6) return (us / 1000).toFixed(1) + " ms";
    return (us / 1e6).toFixed(2) + " s";
  }
  // A verdict's value: "win in 7", "draw", "loss in 4", or a search's
  // expected score for the player deciding ("0.62, depth 4").
  function valueText(a) {
    if (!a) return "";
    if (a.result) return a.plies !== undefined ? a.result + " in " + a.plies : a.result;
    if (a.depth === undefined) return "unproved";
    return Number(a.score).toFixed(2) + ", depth " + a.depth;
  }

  // A verdict's value in a table's cell: "win in 7", "draw", "0.62".
  function shortValue(a) {
    if (!a) return "";
    if (a.result || a.depth === undefined) return valueText(a);
    return Number(a.score).toFixed(2);
  }

  // Whether a verdict's best option is worth naming beside the one
  // played: another option, of another value as the table shows it (an
  // option as good is not a better one).
  function betterShown(v) {
    return v.best !== v.played && shortValue(v.best_value) !== shortValue(v.played_value);
  }

  function sourceText(src) {
    return src === "search" ? "a search's estimate" : src === "tables" ? "exact, from the endgame tables" : src === "solver" ? "exact, from the solver" : src === "end" ? "exact: every option ends the game" : src;
  }

  // Who stands better as the game goes: after each decision, the expected
  // score of the option played. Two players: seat 0's share (its colour
  // from the bottom, seat 1's from the top, as lichess draws it); three:
  // each decision's player's own score, in its colour. A click goes to
  // the decision; blunders are marked.
  function advantageGraph(g, verdicts, go) {
    const n = verdicts.length;
    const W = 600;
    const H = 80;
    const step = W / Math.max(1, n);
    const two = (g.players || 2) === 2;
    const share = (v) => (two ? (v.seat === 0 ? v.played_value.score : 1 - v.played_value.score) : v.played_value.score);
    const kids = [s("rect", { x: 0, y: 0, width: W, height: H, class: "adv-back", fill: two ? SEAT_COLOURS[1] : "#c9d3da" })];
    verdicts.forEach((v, i) => {
      const y = share(v);
      const hgt = Math.max(0, Math.min(1, Number(y) || 0)) * H;
      const bar = s("rect", {
        x: i * step,
        y: H - hgt,
        width: Math.max(step, 0.5),
        height: hgt,
        fill: two ? SEAT_COLOURS[0] : SEAT_COLOURS[v.seat] || "#888",
        class: "adv" + (v.blunder ? " adv-blunder" : ""),
        "data-decision": i + 1,
        "data-share": y,
      });
      bar.appendChild(s("title", {}, "decision " + (i + 1) + ": " + v.played + " " + valueText(v.played_value) + (v.blunder ? " ?? " + (v.why || "") : "")));
      kids.push(bar);
      if (v.blunder) kids.push(s("circle", { cx: (i + 0.5) * step, cy: H - hgt, r: 3.5, class: "blunder-dot", fill: "#e67e22", stroke: "#fff", "data-decision": i + 1 }));
    });
    // An even share: a half with two players, a third with three.
    const even = H * (1 - 1 / (two ? 2 : 3));
    kids.push(s("line", { x1: 0, y1: even, x2: W, y2: even, stroke: "#999", "stroke-dasharray": "3 3" }));
    const marker = s("line", { x1: 0, y1: 0, x2: 0, y2: H, stroke: "#2a7de1", "stroke-width": 2, class: "adv-marker" });
    kids.push(marker);
    const svgEl = s("svg", { viewBox: "0 0 " + W + " " + H, preserveAspectRatio: "none", class: "advantage-graph", width: "100%", height: H, role: "img", "aria-label": "who stands better, decision by decision" }, ...kids);
    svgEl.addEventListener("click", (e) => {
      const box = svgEl.getBoundingClientRect();
      const i = Math.floor(((e.clientX - box.left) / Math.max(1, box.width)) * n);
      go(Math.max(0, Math.min(n, i + 1)));
    });
    const el = h("div", { class: "advantage" }, h("div", { class: "adv-legend", text: two ? "who stands better: " + (g.names || ["seat 0"])[0] + " (light) against " + ((g.names || [])[1] || "seat 1") + " (dark), after each decision" : "each decision's player's expected score" }), svgEl);
    return {
      el: el,
      mark: (k) => {
        const x = Math.max(0, Math.min(W, k * step));
        marker.setAttribute("x1", x);
        marker.setAttribute("x2", x);
        el.dataset.step = k;
      },
    };
  }

  function scoreText(x) {
    if (x === 1) return "1";
    if (x === 0) return "0";
    if (x === 0.5) return "½";
    return String(x);
  }

  // ---- sortable tables ----------------------------------------------------
  function sortKey(td, num) {
    const raw = td.dataset.sort !== undefined ? td.dataset.sort : td.textContent.trim();
    if (!num) return raw.toLowerCase();
    const x = parseFloat(raw);
    return isNaN(x) ? -Infinity : x;
  }
  function makeSortable(table) {
    const heads = table.tHead ? table.tHead.rows[0].cells : [];
    Array.from(heads).forEach((th, col) => {
      if (th.classList.contains("nosort")) return;
      th.classList.add("sorts");
      th.title = "sort by " + th.textContent.trim();
      th.addEventListener("click", () => {
        const num = th.dataset.type === "num";
        const asc = th.dataset.dir !== "asc";
        Array.from(heads).forEach((x) => delete x.dataset.dir);
        th.dataset.dir = asc ? "asc" : "desc";
        const body = table.tBodies[0];
        const rows = Array.from(body.rows);
        rows.sort((a, b) => {
          const x = sortKey(a.cells[col], num);
          const y = sortKey(b.cells[col], num);
          const c = x < y ? -1 : x > y ? 1 : 0;
          return asc ? c : -c;
        });
        rows.forEach((r) => body.appendChild(r));
        table.dispatchEvent(new Event("sorted"));
      });
    });
  }
  document.querySelectorAll("table.sortable").forEach(makeSortable);

  // ---- standings: find a bot, choose a table, a page of rows at a time ----
  // A league of 1,000 bots has tables of 1,000 rows: each shows ROWS at a
  // time, a search shows the matching rows of every table, and the choice
  // of table hides the others. `#standings&q=NAME` opens a search.
  const ROWS = ARENA.rows || 50;
  const standingsTables = Array.from(document.querySelectorAll("table.standings-table"));
  const search = document.getElementById("bot-search");
  const tableFilter = document.getElementById("table-filter");
  const searchCount = document.getElementById("search-count");
  const pageOf = new Map();
  function pagerOf(table) {
    let p = table.nextElementSibling;
    if (p && p.classList.contains("pager")) return p;
    p = h("p", { class: "pager" });
    table.after(p);
    return p;
  }
  // The interval bar of a row shown: drawn by the page for the first rows,
  // here from the row's data-bar for the others when they are first shown
  // (six tables of 1,000 bars took a third of the page's opening).
  function drawBar(tr) {
    const td = tr.querySelector("td.bar-cell");
    if (!td || !td.dataset.bar || td.firstElementChild) return;
    const [x, w, d] = td.dataset.bar.split(" ").map(Number);
    const z = Number(td.dataset.zero);
    td.appendChild(
      s(
        "svg",
        { class: "ibar", viewBox: "0 0 100 10", preserveAspectRatio: "none", "aria-label": td.dataset.tip },
        s("title", { text: td.dataset.tip }),
        s("line", { class: "zero", x1: z, x2: z, y1: 0, y2: 10 }),
        s("rect", { x: x, y: 3, width: w, height: 4 }),
        s("rect", { class: "dot", x: d - 0.6, y: 1, width: 1.2, height: 8 })
      )
    );
  }
  function layoutStandings() {
    const q = search ? search.value.trim().toLowerCase() : "";
    let found = 0;
    standingsTables.forEach((t) => {
      const rows = Array.from(t.tBodies[0].rows);
      const details = t.closest("details");
      const wanted = !tableFilter || !tableFilter.value || details.id === tableFilter.value;
      details.hidden = !wanted;
      const pager = pagerOf(t);
      if (q) {
        let n = 0;
        rows.forEach((r) => {
          const hit = (r.dataset.bot || "").toLowerCase().includes(q);
          r.hidden = !hit;
          if (hit) {
            n++;
            drawBar(r);
          }
        });
        if (wanted) {
          found += n;
          if (n > 0) details.open = true;
        }
        pager.hidden = true;
        return;
      }
      const page = pageOf.get(t) || 0;
      const all = page < 0;
      rows.forEach((r, i) => {
        r.hidden = !all && (i < page * ROWS || i >= (page + 1) * ROWS);
        if (!r.hidden) drawBar(r);
      });
      pager.hidden = rows.length <= ROWS;
      if (pager.hidden) return;
      const pages = Math.ceil(rows.length / ROWS);
      const go = (p) => () => {
        pageOf.set(t, p);
        layoutStandings();
      };
      const from = all ? 1 : page * ROWS + 1;
      const to = all ? rows.length : Math.min(rows.length, (page + 1) * ROWS);
      setChildren(
        pager,
        h("span", { text: "rows " + from + "–" + to + " of " + rows.length }),
        !all && page > 0 ? h("button", { type: "button", text: "← previous", onclick: go(page - 1) }) : null,
        !all && page + 1 < pages ? h("button", { type: "button", text: "next →", onclick: go(page + 1) }) : null,
        all ? h("button", { type: "button", text: "pages of " + ROWS, onclick: go(0) }) : h("button", { type: "button", text: "show all", onclick: go(-1) })
      );
    });
    if (searchCount) searchCount.textContent = q ? found + (found === 1 ? " row matches" : " rows match") : "";
  }
  standingsTables.forEach((t) => t.addEventListener("sorted", layoutStandings));
  if (search)
    search.addEventListener("input", () => {
      const q = search.value.trim();
      history.replaceState(null, "", q ? "#standings&q=" + frag(q) : "#standings");
      layoutStandings();
    });
  if (tableFilter) tableFilter.addEventListener("change", layoutStandings);
  layoutStandings();

  // ---- bot pages: each in its own file, loaded when first shown ----------
  const botFiles = new Map(ARENA.bots || []);
  const botPages = new Map();
  const botWaiters = new Map();
  window.arenaBot = function (d) {
    const holder = document.createElement("div");
    holder.innerHTML = d.html;
    const page = holder.querySelector("section");
    opponentRows(page, d);
    document.getElementById("bot-pages").appendChild(page);
    page.querySelectorAll("table.sortable").forEach(makeSortable);
    botPages.set(d.bot, page);
    (botWaiters.get(d.bot) || []).forEach((w) => w.ok(page));
    botWaiters.delete(d.bot);
  };
  // A bot's results against each opponent, sent as data (a league of
  // 1,000 bots has two million such lines): [label, opponent, W-D-L,
  // score %, pentanomial, pentanomial Elo, LOS %], the label an index into
  // d.labels ([title, label of the game lists' links]).
  function opponentRows(page, d) {
    const body = page.querySelector("tbody.opponents");
    if (!body || !d.opponents) return;
    const labels = d.labels || [];
    append(
      body,
      d.opponents.map((o) => {
        const [title, label] = labels[o[0]] || ["", ""];
        let games = "#games&bot=" + frag(d.bot) + "&vs=" + frag(o[1]);
        if (label) games += "&label=" + frag(label);
        return h(
          "tr",
          null,
          h("td", null, title),
          h("td", null, h("a", { href: "#bot=" + frag(o[1]) }, o[1])),
          o.slice(2).map((x) => h("td", null, x)),
          h("td", null, h("a", { href: games }, "list"))
        );
      })
    );
  }
  function loadBot(name) {
    if (botPages.has(name)) return Promise.resolve(botPages.get(name));
    if (!botFiles.has(name)) return Promise.reject(new Error("no bot named " + name + " in this report"));
    return new Promise((ok, fail) => {
      const first = !botWaiters.has(name);
      if (first) botWaiters.set(name, []);
      botWaiters.get(name).push({ ok: ok, fail: fail });
      if (first) {
        const src = botFiles.get(name);
        script(src, () => {
          const msg = "cannot load " + src + " (copy the report folder whole, or generate the report again)";
          (botWaiters.get(name) || []).forEach((w) => w.fail(new Error(msg)));
          botWaiters.delete(name);
        });
      }
    });
  }

  // ---- data loading (JSONP style) -----------------------------------------
  let index = null;
  let indexWaiters = [];
  const chunks = {};
  const chunkWaiters = {};
  window.arenaIndex = function (d) {
    const byId = new Map();
    d.games.forEach((g, i) => byId.set(g[0], i));
    index = Object.assign({ byId: byId }, d);
    indexWaiters.forEach((w) => w.ok(index));
    indexWaiters = [];
  };
  // A chunk's data: its tables and summaries (`d`), and its positions and
  // decisions in six streams of varints (`bytes`; see src/report/html/
  // replay.rs): read back here into each game's first position, its
  // decisions and each decision's changes. Only bytes, no rule.
  function decodeChunk(d, bytes) {
    const at = {};
    let off = 0;
    for (const [name, len] of d.streams || []) {
      at[name] = { p: off, end: off + len };
      off += len;
    }
    if (off > bytes.length) throw new Error("the data of chunk " + d.chunk + " are cut short");
    const rd = (name) => {
      const s = at[name];
      let x = 0;
      let mul = 1;
      for (;;) {
        if (!s || s.p >= s.end) throw new Error("the data of chunk " + d.chunk + " end early (" + name + ")");
        const c = bytes[s.p++];
        x += (c & 127) * mul;
        mul *= 128;
        if (c < 128) return x;
      }
    };
    const unzz = (x) => (x % 2 ? -(x + 1) / 2 : x / 2);
    const unq = (q) => (q < 100 ? q : ((q - 100) % 90 + 10) * Math.pow(10, Math.floor((q - 100) / 90) + 1));
    const values = d.values || [];
    const options = d.options || [];
    for (const g of d.games) {
      const n = g.decisions || 0;
      g.decisions = [];
      if (!g.positions) continue;
      const start = [];
      let k = -1;
      for (let c = rd("start"); c > 0; c--) {
        k += rd("start") + 1;
        start[k] = values[rd("start")];
      }
      const cur = start.slice();
      const diffs = [];
      for (let j = 0; j < n; j++) {
        const sf = rd("dec");
        const kind = values[rd("dec")];
        const legal = [];
        let last = -1;
        for (let c = rd("legal"); c > 0; c--) {
          last += unzz(rd("legal")) + 1;
          legal.push(options[last]);
        }
        const o = rd("opt");
        const option = o < legal.length ? legal[o] : options[o - legal.length];
        const flags = sf % 4;
        const us = flags ? 0 : unq(rd("time"));
        // seat, option, kind, 1 forced + 2 opening, microseconds, the
        // legal options at the decision
        g.decisions.push([(sf - flags) / 4, option, kind, flags, us, legal]);
        const diff = [];
        k = -1;
        for (let c = rd("diff"); c > 0; c--) {
          k += rd("diff") + 1;
          const code = rd("diff");
          const v = code % 2 ? values[(code - 1) / 2] : cur[k] + unzz(code / 2);
          cur[k] = v;
          diff.push(k, v);
        }
        diffs.push(diff);
      }
      g.start = start;
      g.diffs = diffs;
    }
    return d;
  }
  function gamesLoaded(d) {
    const kidx = new Map();
    d.keys.forEach((k, i) => kidx.set(k, i));
    const games = new Map();
    d.games.forEach((g) => games.set(g.id, g));
    chunks[d.chunk] = { keys: d.keys, kidx: kidx, games: games };
    (chunkWaiters[d.chunk] || []).forEach((w) => w.ok(chunks[d.chunk]));
    delete chunkWaiters[d.chunk];
  }
  function chunkFailed(k, e) {
    const msg = "cannot read the data of chunk " + k + ": " + e.message;
    (chunkWaiters[k] || []).forEach((w) => w.fail(new Error(msg)));
    delete chunkWaiters[k];
  }
  function fromBase64(b64) {
    const bin = atob(b64);
    const bytes = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    return bytes;
  }
  // A game's data in plain form (served one game at a time): its streams
  // in base64 (`data`).
  window.arenaGames = function (d) {
    try {
      gamesLoaded(decodeChunk(d, fromBase64(d.data || "")));
    } catch (e) {
      chunkFailed(d.chunk, e);
    }
  };
  // A chunk of the report's files: gzipped in base64, inflated here (the
  // browser's DecompressionStream): the length of its JSON (4 bytes,
  // little-endian), its JSON, its streams.
  window.arenaGamesZ = function (k, b64) {
    const stream = new Blob([fromBase64(b64)]).stream().pipeThrough(new DecompressionStream("gzip"));
    new Response(stream)
      .arrayBuffer()
      .then((buf) => {
        const bytes = new Uint8Array(buf);
        if (bytes.length < 4) throw new Error("no data");
        const n = bytes[0] + bytes[1] * 256 + bytes[2] * 65536 + bytes[3] * 16777216;
        const d = JSON.parse(new TextDecoder().decode(bytes.subarray(4, 4 + n)));
        gamesLoaded(decodeChunk(d, bytes.subarray(4 + n)));
      })
      .catch((e) => chunkFailed(k, e));
  };
  function script(src, onfail) {
    const el = document.createElement("script");
    el.src = src;
    el.onerror = onfail;
    document.head.appendChild(el);
  }
  function loadIndex() {
    if (index) return Promise.resolve(index);
    return new Promise((ok, fail) => {
      const first = indexWaiters.length === 0;
      indexWaiters.push({ ok: ok, fail: fail });
      if (first)
        script(ARENA.index, () => {
          const msg = "cannot load " + ARENA.index + " (copy the report folder whole)";
          indexWaiters.forEach((w) => w.fail(new Error(msg)));
          indexWaiters = [];
        });
    });
  }
  // Chunk `k` of the index, or (`src` given) a game served on demand by
  // `arena view`, whose script names its chunk `one:ID`.
  function loadChunk(k, src) {
    if (chunks[k]) return Promise.resolve(chunks[k]);
    return new Promise((ok, fail) => {
      const first = !chunkWaiters[k];
      (chunkWaiters[k] = chunkWaiters[k] || []).push({ ok: ok, fail: fail });
      if (first) {
        src = src || "games/" + index.chunks[k] + ".js";
        script(src, () => {
          const msg = "cannot load " + src + " (copy the report folder whole, or generate the report again)";
          (chunkWaiters[k] || []).forEach((w) => w.fail(new Error(msg)));
          delete chunkWaiters[k];
        });
      }
    });
  }

  // ---- views ---------------------------------------------------------------
  const mainView = document.getElementById("main-view");
  const gamesView = document.getElementById("games-view");
  const gameView = document.getElementById("game-view");
  let viewer = null;

  // A %-escape cut short (a link copied in part: `decision=%`) is kept
  // as it is written rather than breaking the page.
  function decoded(text) {
    try {
      return decodeURIComponent(text);
    } catch (e) {
      return text;
    }
  }

  function parseHash() {
    const raw = location.hash.replace(/^#/, "");
    const parts = raw.split("&");
    const args = {};
    let view = "";
    parts.forEach((p, i) => {
      const eq = p.indexOf("=");
      const k = eq < 0 ? p : p.slice(0, eq);
      const v = eq < 0 ? "" : decoded(p.slice(eq + 1));
      if (i === 0) view = k;
      args[k] = v;
    });
    return { view: view, args: args };
  }

  function show(el) {
    document.querySelectorAll(".view").forEach((v) => (v.hidden = v !== el));
    mainView.hidden = el !== mainView;
    if (el !== gameView) viewer = null;
  }

  function route() {
    const r = parseHash();
    if (r.view === "game" && r.args.game) {
      show(gameView);
      // `&decision=N` (the viewer's own "decision N of M"); `&step=N`,
      // its name before, still opens the same place.
      // `&ply=N`: the first position at ply N.
      openGame(r.args.game, r.args.decision !== undefined ? r.args.decision : r.args.ply !== undefined ? { ply: parseInt(r.args.ply, 10) || 0 } : r.args.step);
    } else if (r.view === "games") {
      show(gamesView);
      gameList(r.args);
    } else if (r.view === "bot" && r.args.bot !== undefined) {
      loadBot(r.args.bot)
        .then((page) => {
          // Another link may have been followed meanwhile.
          if (parseHash().args.bot !== r.args.bot) return;
          show(page);
          window.scrollTo(0, 0);
        })
        .catch((e) => {
          show(mainView);
          showError(e.message);
        });
    } else {
      show(mainView);
      if (r.view === "standings" && r.args.q !== undefined && search) {
        search.value = r.args.q;
        layoutStandings();
      }
      if (r.view) {
        const target = document.getElementById(r.view);
        if (target) {
          if (target.tagName === "DETAILS") target.open = true;
          target.scrollIntoView();
        }
      }
    }
  }
  window.addEventListener("hashchange", route);

  // ---- game lists ------------------------------------------------------------
  const PAGE = 100;
  function gameList(args) {
    gamesView.replaceChildren(h("h2", { text: "Games" }), h("p", { text: "loading the game list ..." }));
    loadIndex()
      .then((ix) => {
        const bot = args.bot !== undefined ? ix.bots.indexOf(args.bot) : -2;
        const vs = args.vs !== undefined ? ix.bots.indexOf(args.vs) : -2;
        const label = args.label !== undefined ? ix.labels.indexOf(args.label) : -2;
        const reason = args.reason !== undefined ? ix.reasons.indexOf(args.reason) : -2;
        const forfeit = args.forfeit;
        const fr = forfeit && forfeit !== "any" ? ix.reasons.indexOf(forfeit) : -2;
        const rows = [];
        for (const g of ix.games) {
          if (label !== -2 && g[1] !== label) continue;
          if (bot !== -2 && !g[2].includes(bot)) continue;
          if (vs !== -2 && !g[2].includes(vs)) continue;
          if (reason !== -2 && g[4] !== reason) continue;
          if (forfeit !== undefined) {
            if (g[5] < 0) continue;
            if (bot !== -2 && g[2][g[5]] !== bot) continue;
            if (fr !== -2 && g[4] !== fr) continue;
          }
          rows.push(g);
        }
        const what = [];
        if (args.label) what.push(args.label);
        if (args.bot) what.push((forfeit !== undefined ? "forfeited by " : "with ") + args.bot);
        if (args.vs) what.push("against " + args.vs);
        if (args.reason) what.push("ended by " + args.reason);
        if (forfeit && forfeit !== "any") what.push("forfeit " + forfeit);
        else if (forfeit === "any" && !args.bot) what.push("forfeits");
        const page = Math.max(0, parseInt(args.page || "0", 10) || 0);
        const pages = Math.max(1, Math.ceil(rows.length / PAGE));
        const shown = rows.slice(page * PAGE, page * PAGE + PAGE);
        const link = (p) => {
          const a = Object.assign({}, args, { page: String(p) });
          delete a.games;
          return "#games" + Object.keys(a).map((k) => "&" + k + "=" + frag(a[k])).join("");
        };
        const nav = h(
          "p",
          { class: "pager" },
          page > 0 ? h("a", { href: link(page - 1), text: "← previous" }) : null,
          " page " + (page + 1) + " of " + pages + " ",
          page + 1 < pages ? h("a", { href: link(page + 1), text: "next →" }) : null
        );
        const sampled = ARENA.sample;
        const table = h(
          "table",
          { class: "game-list" },
          h("thead", {}, h("tr", {}, ["game", "variant", "seats", "result", "reason", "plies", "time"].concat(sampled ? ["in the sample as"] : []).map((t) => h("th", { text: t })))),
          h(
            "tbody",
            {},
            shown.map((g) =>
              h(
                "tr",
                { class: g[9] ? "damaged" : null },
                h("td", {}, h("a", { href: "#game=" + frag(g[0]), text: g[0] })),
                h("td", { text: ix.labels[g[1]] }),
                h("td", { text: g[2].map((b, i) => ix.bots[b] + (g[5] === i ? " (forfeit)" : "")).join(" – ") }),
                h("td", { text: g[3].map(scoreText).join(" – ") }),
                h("td", { text: ix.reasons[g[4]] }),
                h("td", { class: "num", text: g[6] }),
                h("td", { class: "num", text: g[7] < 1000 ? g[7] + " ms" : (g[7] / 1000).toFixed(1) + " s" }),
                sampled ? h("td", { class: "why", text: g[10] || "" }) : null
              )
            )
          )
        );
        gamesView.replaceChildren(
          h("h2", { text: "Games" + (what.length ? ": " + what.join(", ") : "") }),
          h("p", { text: rows.length + " games" }),
          sampled ? h("p", { class: "note sample-note" }, sampleText()) : null,
          nav,
          table,
          nav.cloneNode(true)
        );
      })
      .catch((e) => showError(e.message));
  }

  // ---- the game viewer ---------------------------------------------------------
  // What the report holds of the games, and how to see the others.
  function sampleText() {
    const sm = ARENA.sample;
    return [
      "This report holds the viewer data of " + sm.shown + " of its " + sm.total + " games, chosen by this rule: " + sm.rule + ". ",
      ARENA.on_demand ? "Any other game opens here on demand." : ["To see any other game, serve the league's results folder with ", h("code", { text: "arena view RESULTS" }), " and open #game=ID there."],
    ];
  }
  const SEAT_COLOURS = ["#f4f1e8", "#222", "#c0392b"];

  function openGame(id, step) {
    if (viewer && viewer.id === id) {
      viewer.go(step === "end" ? viewer.n : step && step.ply !== undefined ? viewer.stepOfPly(step.ply) : parseInt(step, 10) || 0);
      return;
    }
    gameView.replaceChildren(h("h2", { text: id }), h("p", { text: "loading ..." }));
    loadIndex()
      .then((ix) => {
        const i = ix.byId.get(id);
        let load;
        if (i !== undefined) load = loadChunk(ix.games[i][8]);
        else if (ARENA.on_demand) load = loadChunk("one:" + id, ARENA.on_demand + frag(id));
        else {
          // Not an error: the report holds a sample of the games.
          gameView.replaceChildren(
            h("p", {}, h("a", { href: "#", text: "← report" })),
            h("h2", { text: id }),
            h("p", { class: "note not-in-sample" }, ARENA.sample ? ["Game " + id + " is not in this report. ", sampleText()] : "There is no game " + id + " in this report.")
          );
          return;
        }
        return load.then((c) => {
          const g = c.games.get(id);
          if (!g) throw new Error("game " + id + " is missing from its data file");
          viewer = new Viewer(g, c, i === undefined ? [] : ix.games[i]);
          const n = viewer.n;
          viewer.go(step === "end" ? n : step && step.ply !== undefined ? viewer.stepOfPly(step.ply) : Math.min(n, Math.max(0, parseInt(step, 10) || 0)));
        });
      })
      .catch((e) => {
        gameView.replaceChildren(h("h2", { text: id }), h("p", { class: "note", text: e.message }));
        showError(e.message);
      });
  }

  function Viewer(g, chunk, summary) {
    this.id = g.id;
    this.g = g;
    this.chunk = chunk;
    this.decisions = g.decisions || [];
    this.n = this.decisions.length;
    // Positions: the first whole, then each decision's changes applied.
    const positions = [];
    if (g.start) {
      let pos = g.start.slice();
      positions.push(pos);
      for (const d of g.diffs || []) {
        pos = pos.slice();
        for (let i = 0; i < d.length; i += 2) pos[d[i]] = d[i + 1];
        positions.push(pos);
      }
    }
    this.positions = positions;
    this.build(summary);
  }

  Viewer.prototype.value = function (pos, path) {
    const kidx = this.chunk.kidx;
    const get = (i) => (pos[i] === undefined ? null : pos[i]);
    // A path of the snapshot (null here may be an object split in paths).
    if (kidx.has(path) && get(kidx.get(path)) !== null) return get(kidx.get(path));
    // A leaf array indexed further (kisolo's `inner.0.3`).
    const parts = path.split(".");
    for (let n = parts.length - 1; n > 0; n--) {
      const key = parts.slice(0, n).join(".");
      if (kidx.has(key) && get(kidx.get(key)) !== null) {
        let v = get(kidx.get(key));
        for (const p of parts.slice(n)) v = v === null || v === undefined ? null : v[p];
        return v === undefined ? null : v;
      }
    }
    // An object made of several paths (`pits.4b` = {W, B, R}), or an
    // array of numbers (`inner.0` = [3, 0, ...], kept a number a path).
    const prefix = path + ".";
    let obj = null;
    this.chunk.keys.forEach((k, i) => {
      if (k.startsWith(prefix) && get(i) !== null) {
        obj = obj || {};
        const parts = k.slice(prefix.length).split(".");
        let o = obj;
        parts.slice(0, -1).forEach((p) => (o = o[p] = o[p] || {}));
        o[parts[parts.length - 1]] = get(i);
      }
    });
    const arrays = (o) => {
      if (o === null || typeof o !== "object") return o;
      const ks = Object.keys(o);
      ks.forEach((k) => (o[k] = arrays(o[k])));
      return ks.length && ks.every((k, j) => k === String(j)) ? ks.map((k) => o[k]) : o;
    };
    return arrays(obj);
  };

  Viewer.prototype.build = function (summary) {
    const g = this.g;
    const names = g.names || [];
    const self = this;
    const seats = names.map((n, i) =>
      h("span", { class: "seat" }, h("span", { class: "swatch", style: "background:" + SEAT_COLOURS[i] }), "seat " + i + ": ", h("a", { href: "#bot=" + frag(n), text: n }))
    );
    this.board = h("div", { class: "board" });
    this.status = h("div", { class: "status" });
    // The options the engine listed at this decision, and a link to it.
    this.legal = h("div", { class: "legal" });
    this.link = h("a", { class: "permalink", title: "a link to this game at this decision: copy it" });
    this.slider = h("input", { type: "range", min: 0, max: this.n, value: 0, "aria-label": "decision", oninput: (e) => self.go(parseInt(e.target.value, 10)) });
    this.stepLabel = h("span", { class: "step" });
    const btn = (t, title, f) => h("button", { type: "button", title: title, text: t, onclick: f });
    const controls = h(
      "div",
      { class: "controls" },
      btn("|◀", "start (Home)", () => self.go(0)),
      btn("◀", "previous decision (←)", () => self.go(self.step - 1)),
      btn("▶", "next decision (→)", () => self.go(self.step + 1)),
      btn("▶|", "end (End)", () => self.go(self.n)),
      this.slider,
      this.stepLabel
    );
    // The analysis (`arena analyse --save`): a verdict per decision, in
    // the decisions' order; absent when the game was not analysed.
    this.verdicts = Array.isArray(g.analysis) ? g.analysis : null;
    const verdict = (i) => (this.verdicts ? this.verdicts[i] || null : null);
    this.rows = this.decisions.map((d, i) => {
      const kind = d[2];
      const flags = d[3];
      const marks = [];
      if (flags & 2) marks.push(h("span", { class: "mark opening", title: "opening: played before the bots took over", text: "opening" }));
      if (flags & 1) marks.push(h("span", { class: "mark forced", title: "forced: the only option, applied without asking", text: "forced" }));
      const v = verdict(i);
      const other = v && betterShown(v);
      if (v && v.blunder) marks.push(h("span", { class: "mark blunder", title: "blunder: " + (v.why || ""), text: "??" }));
      return h(
        "tr",
        { onclick: () => self.go(i + 1), class: v && v.blunder ? "blunder" : null },
        h("td", { class: "num", text: i + 1 }),
        h("td", {}, h("span", { class: "swatch", style: "background:" + SEAT_COLOURS[d[0]] }), names[d[0]] !== undefined ? names[d[0]] : "seat " + d[0]),
        h("td", { text: kind }),
        h("td", { class: "opt", text: d[1] }),
        this.verdicts ? h("td", { class: "value", title: v ? valueText(v.played_value) + ": the value of the option played, for its player (" + sourceText(v.source) + ")" : null, text: v ? shortValue(v.played_value) : "" }) : null,
        this.verdicts ? h("td", { class: "opt best", title: other ? "the best option found: " + valueText(v.best_value) : null, text: other ? v.best + " " + shortValue(v.best_value) : "" }) : null,
        h("td", {}, marks),
        h("td", { class: "num", text: flags ? "" : ms(d[4]) })
      );
    });
    const heads = this.verdicts ? ["#", "who", "kind", "option", "value", "best", "", "time"] : ["#", "who", "kind", "option", "", "time"];
    const list = h(
      "div",
      { class: "decisions" },
      h(
        "table",
        {},
        h("thead", {}, h("tr", {}, heads.map((t) => h("th", { text: t, title: t === "time" ? "the bot's time to decide, to two significant digits" : t === "value" ? "the value of the option played for its player: exact (win/draw/loss in plies) or a search's expected score" : null })))),
        h("tbody", {}, this.rows)
      )
    );
    // Beside the board: the analysis of the decision due and of the last.
    this.analysis = this.verdicts ? h("div", { class: "analysis" }) : null;
    this.graph = this.verdicts ? advantageGraph(g, this.verdicts, (step) => self.go(step)) : null;
    const end = g.end || {};
    const scores = (end.scores || summary[3] || []).map((x, i) => (names[i] || "seat " + i) + " " + scoreText(x)).join(", ");
    const result = h(
      "div",
      { class: "result" },
      h("strong", { text: "Result: " }),
      scores,
      " (",
      h("span", { class: "reason", text: end.reason || "" }),
      end.plies !== undefined ? ", " + end.plies + " plies" : "",
      ")",
      end.offender !== null && end.offender !== undefined ? h("div", { class: "forfeit", text: "forfeit by " + (names[end.offender] || "seat " + end.offender) + (end.detail ? ": " + end.detail : "") }) : null
    );
    const opts = g.options && Object.keys(g.options).length ? " " + Object.keys(g.options).map((k) => k + "=" + g.options[k]).join(" ") : "";
    setChildren(
      gameView,
      h("p", {}, h("a", { href: "#", text: "← report" })),
      h("h2", { text: g.id }),
      h("p", { class: "sub" }, (g.variant || "") + opts + ", " + (g.players || "") + " players, seed " + (g.seed || "") + ". ", seats),
      g.notes ? h("p", { class: "note", text: "before the game: " + g.notes.join("; ") }) : null,
      g.note ? h("p", { class: "note damaged-note", text: g.note }) : null,
      g.analysis_note ? h("p", { class: "note analysis-note", text: "the analysis cannot be shown: " + g.analysis_note }) : null,
      h(
        "div",
        { class: "viewer" },
        h("div", { class: "board-col" }, this.board, this.legal, controls, this.status, this.analysis, this.graph ? this.graph.el : null, h("p", { class: "link" }, "link: ", this.link), result),
        list
      )
    );
    this.keyHandler = (e) => {
      // Keys typed in a field (a token, a search) are the field's; on
      // the slider only the arrows step, as the slider itself does.
      const t = e.target;
      const field = t.isContentEditable || t.tagName === "TEXTAREA" || t.tagName === "SELECT" || (t.tagName === "INPUT" && t.type !== "range");
      if (viewer !== self || gameView.hidden || field || t.tagName === "INPUT" && e.key !== "ArrowLeft" && e.key !== "ArrowRight") return;
      if (e.key === "ArrowRight") self.go(self.step + 1);
      else if (e.key === "ArrowLeft") self.go(self.step - 1);
      else if (e.key === "Home") self.go(0);
      else if (e.key === "End") self.go(self.n);
      else return;
      e.preventDefault();
    };
    document.addEventListener("keydown", this.keyHandler);
  };

  Viewer.prototype.go = function (step) {
    if (viewer !== this) {
      document.removeEventListener("keydown", this.keyHandler);
      return;
    }
    const last = Math.max(0, this.positions.length - 1);
    step = Math.max(0, Math.min(isNaN(step) ? 0 : step, last));
    this.step = step;
    this.slider.value = step;
    this.stepLabel.textContent = "decision " + step + " of " + this.n;
    this.rows.forEach((r, i) => r.classList.toggle("current", i + 1 === step));
    if (this.rows[step - 1]) {
      const row = this.rows[step - 1];
      const box = row.closest(".decisions");
      if (box) box.scrollTop = Math.max(0, row.offsetTop - box.clientHeight / 2);
    }
    const pos = this.positions[step];
    if (!pos) {
      this.board.replaceChildren(h("p", { class: "note", text: "no position to show" }));
      return;
    }
    const v = (path) => this.value(pos, path);
    const draw = BOARDS[this.g.variant];
    this.board.replaceChildren(draw ? draw(v, this.g) : h("p", { text: "no drawing for " + this.g.variant }));
    this.board.dataset.step = step;
    const who = v("to_decide");
    const names = this.g.names || [];
    this.status.replaceChildren(
      "ply " + v("ply") + " · ",
      who === null ? "game over" : "to decide: " + (names[who] || "seat " + who) + " (" + v("decision") + ")",
      step > 0 ? " · last: " + this.decisions[step - 1][1] : ""
    );
    this.showLegal(step);
    this.showAnalysis(step);
    const here = "#game=" + frag(this.id) + "&decision=" + (step === this.n ? "end" : step);
    if (location.hash !== here) history.replaceState(null, "", here);
    const link = "#game=" + frag(this.id) + "&decision=" + step;
    this.link.href = link;
    this.link.textContent = location.href.replace(/#.*$/, "") + link;
  };

  // The analysis at `step`: the verdict of the decision due here (the best
  // option and its value) and of the last one (what it gave away), and the
  // graph's marker.
  Viewer.prototype.showAnalysis = function (step) {
    if (!this.analysis) return;
    const names = this.g.names || [];
    const who = (v) => names[v.seat] || "seat " + v.seat;
    const due = this.verdicts[step];
    const last = step > 0 ? this.verdicts[step - 1] : null;
    this.analysis.dataset.step = step;
    setChildren(
      this.analysis,
      h("div", { class: "analysis-head", text: "Analysis" + (due ? " (" + sourceText(due.source) + ")" : "") }),
      due
        ? h("div", { class: "due" }, "best here for " + who(due) + ": ", h("span", { class: "opt", text: due.best }), " " + valueText(due.best_value))
        : h("div", { class: "due", text: step >= this.n ? "game over" : "this decision was not analysed" }),
      last
        ? h(
            "div",
            { class: "last" + (last.blunder ? " blunder" : "") },
            "last: " + who(last) + " played ",
            h("span", { class: "opt", text: last.played }),
            " " + valueText(last.played_value),
            betterShown(last) ? ["; best was ", h("span", { class: "opt", text: last.best }), " " + valueText(last.best_value)] : " (as good as the best found)",
            last.blunder ? h("strong", { class: "blunder-why", text: " ?? " + (last.why || "blunder") }) : null
          )
        : null
    );
    if (this.graph) this.graph.mark(step);
  };

  // The first step whose position is at ply `ply` (the last when none is).
  Viewer.prototype.stepOfPly = function (ply) {
    for (let i = 0; i < this.positions.length; i++) if (this.value(this.positions[i], "ply") >= ply) return i;
    return this.n;
  };

  // The legal options at `step` as the engine listed them; the one played
  // leads to the next decision.
  Viewer.prototype.showLegal = function (step) {
    const d = this.decisions[step];
    const options = d ? d[5] || [] : this.g.legal_end || [];
    const played = d ? d[1] : null;
    const self = this;
    this.legal.dataset.step = step;
    setChildren(
      this.legal,
      options.length ? (d ? "legal options: " : "legal options (none was played): ") : d ? "" : "no decision is due here",
      options.map((o) =>
        h("button", {
          type: "button",
          class: "legal-option" + (o === played ? " played" : ""),
          "data-option": o,
          title: o === played ? "played here: show where it leads" : "a legal option not played here",
          text: o,
          onclick: o === played ? () => self.go(step + 1) : null,
        })
      )
    );
  };

  // ---- boards --------------------------------------------------------------------
  // Every number drawn carries data-k (its path in the engine's snapshot)
  // and data-v (its value as JSON), so that a test can compare the picture
  // with the record.
  function tag(v, path) {
    return { "data-k": path, "data-v": JSON.stringify(v(path)) };
  }
  function num(x, y, v, path, cls) {
    return s("text", Object.assign({ x: x, y: y, class: cls || "n", "text-anchor": "middle" }, tag(v, path)), String(v(path)));
  }
  function label(x, y, t, cls, anchor) {
    return s("text", { x: x, y: y, class: cls || "lbl", "text-anchor": anchor || "middle" }, t);
  }
  function svg(w, hgt, ...kids) {
    return s("svg", { viewBox: "0 0 " + w + " " + hgt, width: w, height: hgt, class: "board-svg" }, kids);
  }
  function stone(x, y, colour, r) {
    const fill = { W: "#f4f1e8", B: "#222", R: "#c0392b" }[colour] || "#999";
    return s("circle", { cx: x, cy: y, r: r || 9, fill: fill, class: "stone" });
  }
  // Counts of coloured stones in a pit: a badge per colour present.
  function badges(x, y, obj, colours) {
    const present = colours.filter((c) => obj && obj[c] > 0);
    const out = [];
    present.forEach((c, i) => {
      const bx = x + (i - (present.length - 1) / 2) * 20;
      out.push(stone(bx, y, c, 9));
      out.push(s("text", { x: bx, y: y + 4, class: "badge " + (c === "W" ? "dark" : "light"), "text-anchor": "middle" }, String(obj[c])));
    });
    return out;
  }

  const BOARDS = {};

  // The bot in `seat` (its name, cut to `max` characters), or "seat N".
  function seatName(g, seat, max) {
    const n = g && g.names && g.names[seat] ? g.names[seat] : "seat " + seat;
    return max && n.length > max ? n.slice(0, max - 1) + "…" : n;
  }

  // F.I.L.O: squares A..H left to right, stacks bottom to top.
  BOARDS.filo = function (v, g) {
    const letters = "ABCDEFGH".split("");
    const W = 60;
    const kids = [];
    letters.forEach((L, i) => {
      const x = 20 + i * W;
      const stack = v("squares." + L) || [];
      kids.push(s("g", tag(v, "squares." + L), s("rect", { x: x, y: 50, width: W - 6, height: 120, class: "sq" }), stack.map((c, j) => stone(x + (W - 6) / 2, 155 - j * 26, c, 12))));
      kids.push(label(x + (W - 6) / 2, 190, L));
    });
    // One line each (White's above Black's): side by side, long texts ran
    // into each other.
    const side = (who, seat, y) =>
      s(
        "text",
        { x: 20, y: y, class: "lbl", "text-anchor": "start" },
        who + " (" + seatName(g, seat, 24) + "): reserve ",
        s("tspan", tag(v, "reserve." + who), String(v("reserve." + who))),
        ", exited ",
        s("tspan", tag(v, "exited." + who), String(v("exited." + who))),
        ", pieces ",
        s("tspan", tag(v, "pieces." + who), String(v("pieces." + who)))
      );
    kids.push(side("white", 0, 18), side("black", 1, 38));
    kids.push(label(20, 210, "White → (enters at A)", "lbl small", "start"), label(494, 210, "← Black (enters at H)", "lbl small", "end"));
    return svg(514, 220, kids);
  };

  // Tricala: the triangle of 21 pits, stones W, B (and R) by count.
  BOARDS.tricala = function (v, g) {
    const colours = g.players === 3 ? ["W", "B", "R"] : ["W", "B"];
    const at = v("at");
    const corners = v("corners") || ["1a", "6a", "6f"];
    const kids = [];
    for (let r = 1; r <= 6; r++) {
      for (let c = 0; c < r; c++) {
        const name = r + "abcdef"[c];
        const x = 260 + (c - (r - 1) / 2) * 76;
        const y = 40 + (r - 1) * 62;
        const pit = v("pits." + name);
        kids.push(
          s(
            "g",
            tag(v, "pits." + name),
            s("circle", { cx: x, cy: y, r: 30, class: "pit" + (corners.includes(name) ? " corner" : "") + (at === name ? " at" : "") }),
            label(x, y - 16, name, "lbl tiny"),
            badges(x, y + 6, pit, colours)
          )
        );
      }
    }
    const info = [];
    colours.forEach((c, i) => {
      info.push(
        s(
          "text",
          { x: 10, y: 400 + i * 18, class: "lbl", "text-anchor": "start" },
          seatName(g, i, 20) + " (" + c + "): captured ",
          s("tspan", tag(v, "captured." + i), String(v("captured." + i))),
          ", on board ",
          s("tspan", tag(v, "on_board." + i), String(v("on_board." + i)))
        )
      );
    });
    const hand = v("hand");
    if (hand) {
      info.push(label(510, 400, "in hand: " + Object.keys(hand).filter((k) => hand[k] > 0).map((k) => k + " " + hand[k]).join(", ") + (v("direction") ? ", going " + v("direction") : ""), "lbl", "end"));
    }
    info.push(label(510, 418, "phase " + v("phase"), "lbl small", "end"));
    return svg(520, 400 + colours.length * 18 + 8, kids, info);
  };

  // Hackaback: White's row w1..w6 above, Black's b1..b6 below, the store S.
  BOARDS.hackaback = function (v) {
    const kids = [];
    const at = v("at");
    const hole = (name, x, y) =>
      s("g", tag(v, "holes." + name), s("circle", { cx: x, cy: y, r: 28, class: "pit" + (at === name ? " at" : "") }), label(x, y - 32, name, "lbl tiny"), badges(x, y + 4, v("holes." + name), ["W", "B"]));
    for (let i = 1; i <= 6; i++) {
      kids.push(hole("w" + i, 40 + (i - 1) * 70, 70));
      kids.push(hole("b" + i, 40 + (i - 1) * 70, 160));
    }
    kids.push(
      s("g", tag(v, "store"), s("rect", { x: 450, y: 60, width: 70, height: 110, rx: 30, class: "pit store" + (at === "S" ? " at" : "") }), label(485, 52, "S", "lbl tiny"), badges(485, 120, v("store"), ["W", "B"]))
    );
    kids.push(label(10, 20, "White sows w1 → w6 → S → b6 … b1", "lbl small", "start"));
    kids.push(label(10, 215, "Black sows b1 → b6 → S → w6 … w1", "lbl small", "start"));
    const hand = v("hand");
    kids.push(
      label(530, 236, "phase " + v("phase") + (hand ? " · in hand: W " + (hand.W || 0) + ", B " + (hand.B || 0) : "") + " · sowing turns " + v("sowing_turns"), "lbl small", "end")
    );
    return svg(540, 246, kids);
  };

  // Kisolo: 4 x C holes as seat 0 sees them (seat 1's rows above, reversed).
  BOARDS.kisolo = function (v, g) {
    const C = v("columns") || 7;
    const kids = [];
    const rows = [
      ["outer", 1, true],
      ["inner", 1, true],
      ["inner", 0, false],
      ["outer", 0, false],
    ];
    rows.forEach((row, r) => {
      const [ring, seat, reversed] = row;
      const y = 40 + r * 56 + (r >= 2 ? 14 : 0);
      // The ring first: a long name ran under the first hole and hid it.
      kids.push(label(10, y + 5, ring + ": " + seatName(g, seat, 14), "lbl small", "start"));
      for (let c = 0; c < C; c++) {
        const k = reversed ? C - 1 - c : c;
        const x = 170 + c * 56;
        const path = ring + "." + seat + "." + k;
        kids.push(s("circle", { cx: x, cy: y, r: 22, class: "pit" + (ring === "inner" ? " inner" : "") }));
        kids.push(num(x, y + 6, v, path));
        kids.push(label(x, y + (r < 2 ? -25 : 34), (ring === "outer" ? "o" : "i") + (k + 1), "lbl tiny"));
      }
    });
    kids.push(s("line", { x1: 140, x2: 170 + C * 56, y1: 139, y2: 139, class: "divider" }));
    return svg(190 + C * 56, 270, kids);
  };

  // Diffusion: F E D C B A above, G .. L below, the West and East pits.
  // South is seat 0; a mover's large pit is East for South, West for North.
  BOARDS.diffusion = function (v, g) {
    const kids = [];
    const top = "FEDCBA".split("");
    const bottom = "GHIJKL".split("");
    kids.push(s("rect", { x: 80, y: 20, width: 204, height: 150, class: "block a" }));
    kids.push(s("rect", { x: 284, y: 20, width: 204, height: 150, class: "block b" }));
    const pit = (L, x, y) => [s("circle", { cx: x, cy: y, r: 26, class: "pit" }), num(x, y + 7, v, "pits." + L), label(x, y + (y < 90 ? -30 : 42), L, "lbl tiny")];
    top.forEach((L, i) => kids.push(pit(L, 114 + i * 68, 60)));
    bottom.forEach((L, i) => kids.push(pit(L, 114 + i * 68, 130)));
    kids.push(s("rect", { x: 16, y: 30, width: 54, height: 130, rx: 26, class: "pit" }), num(43, 102, v, "west"), label(43, 180, "West", "lbl small"), label(43, 194, "North's", "lbl tiny"));
    kids.push(s("rect", { x: 498, y: 30, width: 54, height: 130, rx: 26, class: "pit" }), num(525, 102, v, "east"), label(525, 180, "East", "lbl small"), label(525, 194, "South's", "lbl tiny"));
    kids.push(label(182, 186, "block A (South's)", "lbl tiny"), label(386, 186, "block B (North's)", "lbl tiny"));
    kids.push(label(284, 14, "North: " + seatName(g, 1, 30), "lbl small"), label(284, 208, "South: " + seatName(g, 0, 30), "lbl small"));
    return svg(568, 216, kids);
  };

  // ---- start ---------------------------------------------------------------
  route();
  if (document.getElementById("running")) {
    // A page not written again for 10 minutes: its run may have been
    // killed (kill -9 leaves the mark), which only a run or `arena
    // report` can take away; said, with where to look.
    const stale = document.getElementById("stale");
    const age = stale ? Date.now() / 1000 - Number(stale.dataset.at) : 0;
    if (stale && Number(stale.dataset.at) > 0 && age > 600) {
      stale.textContent = " (but this page was written " + Math.round(age / 60) + " minutes ago, and a run at its default writes it about every 30 s: if none plays the league any more, `arena status` of its folder says so and `arena report` brings the page up to date)";
      stale.hidden = false;
    }
    // A running league: reload now and then while the main page is shown
    // (a league stopped before its end takes the mark away).
    setInterval(() => {
      if (!mainView.hidden) location.reload();
    }, 30000);
  }
})();
