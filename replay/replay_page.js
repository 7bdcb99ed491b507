/* rummyguard replay page: rebuilds each state from the embedded patches and draws it.
 * Every text from the log is inserted with textContent (never innerHTML): the log is untrusted.
 * The script reads only the snapshot key convention of Variant.snapshot; other keys are
 * drawn generically so a new variant shows without changes here. */
(function () {
  "use strict";

  var DATA = JSON.parse(document.getElementById("rg-data").textContent);
  var META = DATA.meta;
  var EVENTS = DATA.events;
  var FINDINGS = DATA.findings;
  var N = EVENTS.length;
  var SEATS = META.seats || [];
  var HIDDEN = "??";
  var SUITS = { C: "♣", D: "♦", H: "♥", S: "♠" };
  var SUIT_NAMES = { C: "clubs", D: "diamonds", H: "hearts", S: "spades" };
  var RANK_NAMES = { T: "10", J: "jack", Q: "queen", K: "king", A: "ace" };
  var RANKS = "23456789TJQKA";
  var SUIT_ORDER = { S: 0, H: 1, C: 2, D: 3 }; // alternating colours in a hand
  var KNOWN = ["variant", "round", "dealer", "in_turn", "active", "out", "hands", "hand_counts",
    "stock_count", "stock", "discard_pile", "melds", "pots", "scores", "over", "winners"];
  var PILE_SHOWN = 8;

  // -- states: patches -> full snapshots with structural sharing -------------------------
  function applyPatch(prev, patch) {
    if (patch === null) return prev;
    var op = patch[0];
    if (op === "=") return patch[1];
    if (op === "{") {
      var out = Object.assign({}, prev);
      Object.keys(patch[1]).forEach(function (k) { out[k] = applyPatch(prev[k], patch[1][k]); });
      return out;
    }
    if (op === "[") {
      return prev.slice(0, patch[1]).concat(patch[3], prev.slice(prev.length - patch[2]));
    }
    throw new Error("unknown patch op " + op);
  }
  var STATES = [];
  (function () {
    var s = null;
    for (var i = 0; i < N; i++) { s = applyPatch(s, DATA.patches[i]); STATES.push(s); }
  })();

  var BY_INDEX = {};
  FINDINGS.forEach(function (f) { (BY_INDEX[f.i] = BY_INDEX[f.i] || []).push(f); });
  var FINDING_INDEXES = Object.keys(BY_INDEX).map(Number).sort(function (a, b) { return a - b; });

  // -- DOM helpers --------------------------------------------------------------------------
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function isCard(code) {
    return typeof code === "string" && (code === "JK" || code === HIDDEN ||
      (code.length === 2 && RANKS.indexOf(code[0]) >= 0 && SUITS[code[1]] !== undefined));
  }
  function isCardList(v) {
    return Array.isArray(v) && v.length > 0 && v.every(isCard);
  }
  function cardName(code) {
    if (code === "JK") return "joker";
    if (code === HIDDEN) return "face-down card";
    return (RANK_NAMES[code[0]] || code[0]) + " of " + SUIT_NAMES[code[1]];
  }
  function cardText(code) {
    if (code === "JK") return "JK";
    if (code === HIDDEN) return "??";
    return (code[0] === "T" ? "10" : code[0]) + SUITS[code[1]];
  }
  function card(code) {
    var c = el("span", "card");
    c.setAttribute("role", "img");
    c.setAttribute("aria-label", cardName(code));
    c.title = cardName(code);
    c.dataset.card = code;
    if (code === HIDDEN) { c.classList.add("back"); return c; }
    if (code === "JK") {
      c.classList.add("joker");
      var j = el("span", "idx"); j.appendChild(el("span", "r", "JK")); c.appendChild(j);
      c.appendChild(el("span", "pip", "★"));
      return c;
    }
    if (code[1] === "H" || code[1] === "D") c.classList.add("red");
    var idx = el("span", "idx");
    idx.appendChild(el("span", "r", code[0] === "T" ? "10" : code[0]));
    idx.appendChild(el("span", "s", SUITS[code[1]]));
    c.appendChild(idx);
    c.appendChild(el("span", "pip", SUITS[code[1]]));
    return c;
  }
  function backs(n, cls) {
    var wrap = el("div", cls || "cards");
    for (var i = 0; i < n; i++) wrap.appendChild(card(HIDDEN));
    return wrap;
  }
  function cardRow(codes, cls) {
    var wrap = el("div", cls || "cards");
    codes.forEach(function (c) { wrap.appendChild(card(c)); });
    return wrap;
  }
  function handOrder(codes) {
    function key(c) {
      if (!isCard(c) || c === "JK" || c === HIDDEN) return 100;
      return SUIT_ORDER[c[1]] * 20 + RANKS.indexOf(c[0]);
    }
    return codes.slice().sort(function (a, b) { return key(a) - key(b); });
  }
  function humanize(key) {
    var s = String(key).replace(/_/g, " ");
    return s.charAt(0).toUpperCase() + s.slice(1);
  }
  function playerName(v) {
    if (typeof v === "number" && v >= 0 && v < SEATS.length) return SEATS[v];
    if (v === null || v === undefined || v === -1) return null;
    return String(v);
  }
  function chipPool(name, amount) {
    var p = el("div", "pool");
    p.dataset.pool = name;
    p.appendChild(el("span", "chip"));
    p.appendChild(el("span", "amount", amount));
    if (name) p.appendChild(el("span", "pool-name", name));
    return p;
  }
  function segments(target, segs) {
    (segs || []).forEach(function (s) {
      if (typeof s === "string") target.appendChild(el("span", null, s));
      else if (s && typeof s.c === "string") target.appendChild(card(s.c));
    });
    return target;
  }
  function isPerPlayer(v) {
    if (!v || typeof v !== "object" || Array.isArray(v)) return false;
    var keys = Object.keys(v);
    return keys.length > 0 && keys.every(function (k) {
      return SEATS.indexOf(k) >= 0 && (v[k] === null || typeof v[k] !== "object");
    });
  }
  // Any JSON value, drawn: card lists as cards, dicts as definition lists.
  function generic(v, depth) {
    depth = depth || 0;
    if (v === null || v === undefined) return el("span", "empty", "—");
    if (typeof v === "boolean") return el("span", null, v ? "yes" : "no");
    if (typeof v === "number") return el("span", "count", v);
    if (typeof v === "string") return isCard(v) ? cardRow([v]) : el("span", null, v);
    if (Array.isArray(v)) {
      if (v.length === 0) return el("span", "empty", "none");
      if (isCardList(v)) return cardRow(v, "cards hand");
      if (v.every(function (x) { return x === null || typeof x !== "object"; })) {
        return el("span", null, v.map(function (x) { return x === null ? "—" : String(x); }).join(", "));
      }
      var list = el("div");
      v.forEach(function (x) { list.appendChild(generic(x, depth + 1)); });
      return list;
    }
    var keys = Object.keys(v);
    if (keys.length === 0) return el("span", "empty", "none");
    if (depth > 4) return el("code", null, JSON.stringify(v));
    var dl = el("dl", "extras");
    keys.forEach(function (k) {
      dl.appendChild(el("dt", null, humanize(k)));
      var dd = el("dd"); dd.appendChild(generic(v[k], depth + 1)); dl.appendChild(dd);
    });
    return dl;
  }

  // -- the table ------------------------------------------------------------------------------
  function seatPanel(pid, s, stats) {
    var active = Array.isArray(s.active) ? s.active.indexOf(pid) >= 0 : true;
    var winners = Array.isArray(s.winners) ? s.winners : [];
    var panel = el("div", "seat");
    panel.dataset.player = pid;
    panel.dataset.testid = "seat";
    panel.setAttribute("aria-label", "Seat of " + pid);
    if (s.in_turn === pid) panel.classList.add("in-turn");
    if (!active) panel.classList.add("inactive");
    if (META.viewer === pid) panel.classList.add("viewer");
    var head = el("div", "seat-head");
    head.appendChild(el("span", "name", pid));
    if (META.viewer === pid) head.appendChild(el("span", "tag", "you"));
    if (s.dealer === pid) head.appendChild(el("span", "tag dealer", "Dealer"));
    if (s.in_turn === pid) head.appendChild(el("span", "tag turn", "In turn"));
    // out of the game, with the reason the state gives (left, strikes, bust...)
    var why = s.out && typeof s.out === "object" ? s.out[pid] : null;
    if (!active) head.appendChild(el("span", "tag out", why ? "Out (" + humanize(why).toLowerCase() + ")" : "Out"));
    if (winners.indexOf(pid) >= 0) head.appendChild(el("span", "tag win", "★ Winner"));
    var hands = s.hands || {};
    var counts = s.hand_counts || {};
    var shown = Array.isArray(hands[pid]);
    var n = shown ? hands[pid].length : (typeof counts[pid] === "number" ? counts[pid] : null);
    if (n !== null) head.appendChild(el("span", "tag stat", n + (n === 1 ? " card" : " cards")));
    if (s.scores && typeof s.scores === "object" && s.scores[pid] !== undefined) {
      head.appendChild(el("span", "tag stat", "score " + s.scores[pid]));
    }
    stats.forEach(function (st) {
      if (st.value[pid] !== undefined && st.value[pid] !== null) {
        head.appendChild(el("span", "tag stat", humanize(st.key).toLowerCase() + " " + st.value[pid]));
      }
    });
    panel.appendChild(head);
    var hand;
    if (shown) {
      hand = cardRow(handOrder(hands[pid]), "hand cards");
      hand.dataset.visible = "true";
    } else {
      hand = backs(n || 0, "hand cards");
      hand.dataset.visible = "false";
    }
    hand.dataset.testid = "hand";
    if (n === 0) hand.appendChild(el("span", "empty", "no cards"));
    panel.appendChild(hand);
    return panel;
  }

  function zone(title, testid) {
    var z = el("div", "zone");
    if (testid) z.dataset.testid = testid;
    z.appendChild(el("div", "zone-title", title));
    return z;
  }

  function board(s, layout) {
    var b = el("div", "board");
    if (typeof s.stock_count === "number" || Array.isArray(s.stock)) {
      var count = typeof s.stock_count === "number" ? s.stock_count : s.stock.length;
      var z = zone("Stock", "stock");
      var stack = el("div", "stock-stack");
      for (var i = 0; i < Math.min(3, count); i++) stack.appendChild(card(HIDDEN));
      z.appendChild(stack);
      z.appendChild(el("div", "zone-note", count + " face down"));
      if (Array.isArray(s.stock) && s.stock.length) {
        var d = el("details");
        d.appendChild(el("summary", null, "Order (top first)"));
        d.appendChild(cardRow(s.stock, "cards pile-cards"));
        z.appendChild(d);
      }
      b.appendChild(z);
    }
    if (Array.isArray(s.discard_pile)) {
      var pz = zone("Discard pile", "discard");
      var pile = s.discard_pile;
      if (pile.length === 0) {
        pz.appendChild(el("div", "empty", "empty"));
      } else {
        var shownPile = pile.slice(-PILE_SHOWN);
        var row = cardRow(shownPile, "cards pile-cards");
        row.lastChild.classList.add("top");
        row.lastChild.dataset.testid = "discard-top";
        pz.appendChild(row);
        var note = "top: " + cardText(pile[pile.length - 1]) + " · " + pile.length + " card" + (pile.length === 1 ? "" : "s");
        pz.appendChild(el("div", "zone-note", note));
        if (pile.length > PILE_SHOWN) {
          var dd = el("details");
          dd.appendChild(el("summary", null, "Whole pile (bottom first)"));
          dd.appendChild(cardRow(pile, "cards pile-cards"));
          pz.appendChild(dd);
        }
      }
      b.appendChild(pz);
    }
    if (s.pots && typeof s.pots === "object") {
      var pays = [], others = [];
      Object.keys(s.pots).forEach(function (k) {
        if (k.indexOf("pay:") === 0) pays.push(k); else others.push(k);
      });
      if (others.length) {
        var cz = zone("Pots", "pots");
        var pots = el("div", "pots");
        others.forEach(function (k) { pots.appendChild(chipPool(k, s.pots[k])); });
        cz.appendChild(pots);
        b.appendChild(cz);
      }
      if (pays.length) {
        var yz = zone("Pay cards", "paycards");
        var wrap = el("div", "paycards");
        pays.forEach(function (k) {
          var code = k.slice(4);
          var tile = el("div", "paycard");
          tile.dataset.pool = k;
          tile.appendChild(isCard(code) ? card(code) : el("span", null, code));
          tile.appendChild(chipPool("", s.pots[k]));
          wrap.appendChild(tile);
        });
        yz.appendChild(wrap);
        b.appendChild(yz);
      }
    }
    // Hidden piles (``widow`` + ``widow_count``...): faces when the view shows them, else backs.
    layout.piles.forEach(function (k) {
      var pz = zone(humanize(k), "pile-" + k);
      var count = s[k + "_count"];
      if (Array.isArray(s[k])) pz.appendChild(s[k].length ? cardRow(s[k], "cards hand") : el("div", "empty", "none"));
      else pz.appendChild(count ? backs(count, "cards hand") : el("div", "empty", "none"));
      pz.appendChild(el("div", "zone-note", count + (count === 1 ? " card" : " cards") +
        (Array.isArray(s[k]) ? "" : ", face down")));
      b.appendChild(pz);
    });
    // Other top-level card values (Michigan's ``played``, Liverpool's ``live_discard``...).
    layout.cardKeys.forEach(function (k) {
      var cz = zone(humanize(k), "zone-" + k);
      cz.appendChild(cardRow(Array.isArray(s[k]) ? s[k] : [s[k]], "cards pile-cards"));
      b.appendChild(cz);
    });
    if (Array.isArray(s.melds)) {
      var mz = zone("Melds on the table", "melds");
      mz.classList.add("melds-zone");
      if (s.melds.length === 0) mz.appendChild(el("div", "empty", "no melds yet"));
      var melds = el("div", "melds");
      s.melds.forEach(function (m, k) {
        var box = el("div", "meld");
        box.dataset.testid = "meld";
        if (!m || typeof m !== "object" || !Array.isArray(m.cards)) { box.appendChild(generic(m)); melds.appendChild(box); return; }
        var owner = playerName(m.owner);
        box.appendChild(el("div", "meld-label", "#" + k + " " + (m.kind || "meld") + (owner ? " · " + owner : "")));
        var row = el("div", "cards");
        m.cards.forEach(function (c, j) {
          var face = card(c);
          var stands = Array.isArray(m.stands) ? m.stands[j] : null;
          if (stands && stands !== c && isCard(c)) {
            face.appendChild(el("span", "stands", "=" + cardText(stands)));
            face.title = cardName(c) + " standing for " + cardName(stands);
          }
          row.appendChild(face);
        });
        box.appendChild(row);
        melds.appendChild(box);
      });
      mz.appendChild(melds);
      b.appendChild(mz);
    }
    if (!b.childNodes.length) b.hidden = true;
    return b;
  }

  // Sort the snapshot's keys the convention does not name: hidden piles (K with K_count),
  // card values (drawn on the board), per-player values (on the seats), the rest (generic).
  function classify(s) {
    var used = {};
    KNOWN.forEach(function (k) { used[k] = true; });
    var out = { piles: [], cardKeys: [], stats: [], extras: [] };
    Object.keys(s).forEach(function (k) {
      var m = /^(.+)_count$/.exec(k);
      if (m && !used[k] && typeof s[k] === "number" && Object.prototype.hasOwnProperty.call(s, m[1]) &&
          (s[m[1]] === null || Array.isArray(s[m[1]]))) {
        out.piles.push(m[1]); used[k] = true; used[m[1]] = true;
      }
    });
    if (s.pots && typeof s.pots === "object" && Object.keys(s.pots).some(function (k) { return k.indexOf("pay:") === 0; })) {
      used.pay_cards = true; // drawn as the pay-card tiles
    }
    Object.keys(s).forEach(function (k) {
      if (used[k]) return;
      var v = s[k];
      if ((typeof v === "string" && isCard(v)) || isCardList(v)) out.cardKeys.push(k);
      else if (isPerPlayer(v)) out.stats.push({ key: k, value: v });
      else out.extras.push(k);
    });
    return out;
  }

  function drawTable(i) {
    var s = STATES[i] || {};
    var t = document.getElementById("rg-table");
    t.textContent = "";
    if (META.halt_index !== null && i > META.halt_index) {
      t.appendChild(el("div", "halted-note", "The replay halted at seq " + EVENTS[META.halt_index].seq +
        ": later events were not applied; the table is the last state the replay could follow."));
    }
    var status = el("div", "status");
    status.dataset.testid = "status";
    function stat(label, value) {
      var sp = el("span"); sp.appendChild(el("span", null, label + " ")); sp.appendChild(el("b", null, value)); status.appendChild(sp);
    }
    if (s.round !== undefined) stat("Round", s.round);
    if (s.dealer !== undefined && s.dealer !== null) stat("Dealer", s.dealer);
    // in_turn null: in the full view nobody holds the turn (a system step); in a player's
    // view it may also be hidden (Michigan hides who holds the next card), so say nothing.
    if (s.in_turn !== undefined) stat("In turn", s.in_turn !== null ? s.in_turn : META.viewer ? "—" : "— (system)");
    if (s.over) {
      var w = Array.isArray(s.winners) && s.winners.length ? " · winners: " + s.winners.join(", ") : "";
      status.appendChild(el("span", "over", "Game over" + w));
    }
    if (Object.keys(s).length === 0) status.appendChild(el("span", null, "No game state yet (the log has not created the game)."));
    t.appendChild(status);

    var layout = classify(s);
    var extras = layout.extras, stats = layout.stats;
    var order = SEATS.slice();
    Object.keys(s.hand_counts || {}).forEach(function (p) { if (order.indexOf(p) < 0) order.push(p); });
    var top, bottom;
    if (META.viewer) {
      top = order.filter(function (p) { return p !== META.viewer; });
      bottom = order.filter(function (p) { return p === META.viewer; });
    } else {
      var half = Math.ceil(order.length / 2);
      top = order.slice(0, half);
      bottom = order.slice(half);
    }
    var topEl = el("div", "seats seats-top");
    top.forEach(function (p) { topEl.appendChild(seatPanel(p, s, stats)); });
    t.appendChild(topEl);
    t.appendChild(board(s, layout));
    if (extras.length) {
      var ex = el("div", "board");
      ex.dataset.testid = "extras";
      var z = zone("More state");
      var obj = {};
      extras.forEach(function (k) { obj[k] = s[k]; });
      z.appendChild(generic(obj));
      ex.appendChild(z);
      t.appendChild(ex);
    }
    var bottomEl = el("div", "seats seats-bottom");
    bottom.forEach(function (p) { bottomEl.appendChild(seatPanel(p, s, stats)); });
    t.appendChild(bottomEl);
  }

  // -- side panels --------------------------------------------------------------------------
  function drawEvent(i) {
    var e = EVENTS[i];
    var box = document.getElementById("rg-event");
    box.textContent = "";
    var head = el("div", "ev-head");
    head.appendChild(el("span", "ev-type", e.type));
    head.appendChild(el("span", "ev-meta", "seq " + e.seq + " · " + e.ts + " · by " + e.actor));
    box.appendChild(head);
    var desc = segments(el("div", "ev-desc"), e.desc);
    desc.dataset.testid = "event-desc";
    box.appendChild(desc);
    if (e.event && Array.isArray(e.event.redacted)) {
      box.appendChild(el("div", "note redacted", "Hidden from " + META.viewer + ": " + e.event.redacted.join(", ")));
    }
    if (META.halt_index !== null && i > META.halt_index) {
      box.appendChild(el("div", "note not-applied", "Not applied: the replay halted before this event."));
    }
    var d = el("details");
    d.appendChild(el("summary", null, "Event as logged (JSON)"));
    d.appendChild(el("pre", "raw", JSON.stringify(e.event, null, 2)));
    box.appendChild(d);
  }

  function drawHere(i) {
    var box = document.getElementById("rg-here");
    box.textContent = "";
    var list = BY_INDEX[i] || [];
    if (!list.length) {
      box.appendChild(el("p", "here-empty", FINDINGS.length ? "None at this event." : "None: the game is clean."));
    } else {
      var ol = el("ol", "findings-list");
      list.forEach(function (f) {
        var orig = document.getElementById("finding-" + f.n);
        if (!orig) return;
        var copy = orig.cloneNode(true);
        copy.removeAttribute("id");
        copy.classList.add("current");
        ol.appendChild(copy);
      });
      box.appendChild(ol);
    }
    document.querySelectorAll(".rg-all .finding").forEach(function (li) {
      var on = Number(li.dataset.index) === i;
      li.classList.toggle("current", on);
    });
    var first = document.querySelector(".rg-all .finding.current");
    if (first && first.parentElement) {
      var c = first.parentElement;
      if (first.offsetTop < c.scrollTop || first.offsetTop > c.scrollTop + c.clientHeight - 40) {
        c.scrollTop = first.offsetTop - c.offsetTop - 8;
      }
    }
  }

  function drawLog(i) {
    var ol = document.getElementById("rg-log");
    ol.textContent = "";
    var from = Math.max(0, i - 7), to = Math.min(N - 1, i + 3);
    for (var k = from; k <= to; k++) {
      var e = EVENTS[k];
      var li = el("li");
      li.dataset.index = k;
      if (k === i) { li.classList.add("current"); li.setAttribute("aria-current", "step"); }
      if (k > i) li.classList.add("future");
      li.appendChild(el("span", "seq", "seq " + e.seq));
      li.appendChild(segments(el("span", "desc"), e.desc));
      var f = BY_INDEX[k];
      li.appendChild(f ? el("span", "flag kind-" + f[0].kind) : el("span"));
      if (f) li.lastChild.title = f.map(function (x) { return x.rule; }).join(", ");
      ol.appendChild(li);
    }
  }

  function drawPosition(i) {
    var e = EVENTS[i];
    var pos = document.getElementById("rg-position");
    pos.textContent = "";
    pos.appendChild(el("span", null, "Event " + (i + 1) + " of " + N + " · seq " + e.seq + " · "));
    pos.appendChild(el("span", "type", e.type));
    pos.appendChild(el("span", null, " · " + e.actor + " · " + e.ts));
    var f = BY_INDEX[i];
    if (f) pos.appendChild(el("span", null, " · ⚑ " + f.map(function (x) { return x.rule; }).join(", ")));
  }

  // -- navigation --------------------------------------------------------------------------------
  var current = -1;
  var slider = document.getElementById("rg-slider");
  function go(i) {
    i = Math.max(0, Math.min(N - 1, i | 0));
    current = i;
    slider.value = String(i);
    document.body.dataset.index = String(i);
    drawPosition(i);
    drawTable(i);
    drawEvent(i);
    drawHere(i);
    drawLog(i);
    document.getElementById("rg-first").disabled = i === 0;
    document.getElementById("rg-prev").disabled = i === 0;
    document.getElementById("rg-next").disabled = i === N - 1;
    document.getElementById("rg-last").disabled = i === N - 1;
    document.getElementById("rg-next-finding").disabled = nextFinding(i) === null;
    document.getElementById("rg-prev-finding").disabled = prevFinding(i) === null;
    document.querySelectorAll(".marker[data-index]").forEach(function (m) {
      m.classList.toggle("current", Number(m.dataset.index) === i);
    });
    if (history.replaceState) {
      try { history.replaceState(null, "", "#seq=" + EVENTS[i].seq); } catch (err) { /* file:// in some browsers */ }
    }
  }
  function nextFinding(i) {
    for (var k = 0; k < FINDING_INDEXES.length; k++) if (FINDING_INDEXES[k] > i) return FINDING_INDEXES[k];
    return null;
  }
  function prevFinding(i) {
    for (var k = FINDING_INDEXES.length - 1; k >= 0; k--) if (FINDING_INDEXES[k] < i) return FINDING_INDEXES[k];
    return null;
  }

  function buildMarkers() {
    var box = document.getElementById("rg-markers");
    var frac = function (i) { return N > 1 ? i / (N - 1) : 0; };
    var place = function (m, i) { m.style.left = "calc(8px + (100% - 16px) * " + frac(i) + ")"; };
    FINDING_INDEXES.forEach(function (i) {
      var fs = BY_INDEX[i];
      var m = el("button", "marker kind-" + fs[0].kind);
      m.type = "button";
      m.dataset.index = i;
      m.dataset.testid = "marker";
      var label = "seq " + EVENTS[i].seq + ": " + fs.map(function (f) { return f.rule + " (" + f.kind + ")"; }).join(", ");
      m.title = label;
      m.setAttribute("aria-label", "Finding at " + label);
      place(m, i);
      m.addEventListener("click", function () { go(i); });
      box.appendChild(m);
    });
    if (META.halt_index !== null) {
      var h = el("span", "marker halt");
      h.title = "Replay halted at seq " + EVENTS[META.halt_index].seq;
      place(h, META.halt_index);
      box.appendChild(h);
    }
  }

  function initialIndex() {
    var m = /seq=(-?\d+)/.exec(location.hash || "");
    if (m) {
      var seq = Number(m[1]);
      for (var k = N - 1; k >= 0; k--) if (EVENTS[k].seq === seq) return k;
    }
    return META.initial || 0;
  }

  slider.max = String(N - 1);
  slider.addEventListener("input", function () { go(Number(slider.value)); });
  document.getElementById("rg-first").addEventListener("click", function () { go(0); });
  document.getElementById("rg-prev").addEventListener("click", function () { go(current - 1); });
  document.getElementById("rg-next").addEventListener("click", function () { go(current + 1); });
  document.getElementById("rg-last").addEventListener("click", function () { go(N - 1); });
  document.getElementById("rg-next-finding").addEventListener("click", function () {
    var k = nextFinding(current); if (k !== null) go(k);
  });
  document.getElementById("rg-prev-finding").addEventListener("click", function () {
    var k = prevFinding(current); if (k !== null) go(k);
  });
  document.addEventListener("click", function (ev) {
    var t = ev.target;
    if (!(t instanceof Element)) return;
    var jump = t.closest(".finding-jump");
    if (jump) { go(Number(jump.dataset.index)); document.getElementById("rg-table").focus({ preventScroll: true }); return; }
    var row = t.closest("#rg-log li");
    if (row) go(Number(row.dataset.index));
  });
  document.addEventListener("keydown", function (ev) {
    if (ev.altKey || ev.ctrlKey || ev.metaKey) return;
    var tag = ev.target && ev.target.tagName;
    if (tag === "TEXTAREA" || (tag === "INPUT" && ev.target.type !== "range")) return;
    var step = ev.shiftKey ? 10 : 1;
    var k = null;
    switch (ev.key) {
      case "ArrowRight": go(current + step); break;
      case "ArrowLeft": go(current - step); break;
      case "PageDown": go(current + 50); break;
      case "PageUp": go(current - 50); break;
      case "Home": go(0); break;
      case "End": go(N - 1); break;
      case "n": case "N": k = nextFinding(current); if (k !== null) go(k); break;
      case "p": case "P": k = prevFinding(current); if (k !== null) go(k); break;
      default: return;
    }
    ev.preventDefault();
  });

  buildMarkers();
  go(initialIndex());
  document.body.dataset.ready = "true";
})();
