// ttr replay view: draws the film that ttr_arena/pages/viewer/__init__.py embeds (TTR.data()).
// Every frame was made by the engine (a seat's frame is its view); this script only rebuilds
// the delta-encoded frames and draws them. Every name, event and fault is set with
// textContent: bot names and fault messages are hostile input.
(function () {
  "use strict";
  var film = TTR.data();
  var $ = function (id) { return document.getElementById(id); };
  var text = TTR.text;
  if (film.format !== "ttr-film/1") {
    $("title").textContent = "This file's replay data is of an unknown format (" + film.format + ")";
    return;
  }
  var N = film.steps.length - 1;          // the last step
  var seats = film.num_seats;
  var names = film.names;
  var colours = film.seat_colours;
  var isBoard = film.family === "board";
  // A step's phase in words; the plain turn has none (the header already says "turn N").
  var PHASES = {deal: "the deal", setup_tickets: "starting tickets", turn: "",
    second_card: "second card", keep_tickets: "ticket choice"};

  // ---- frames: the film's deltas, rebuilt (ttr_arena.pages.viewer.frames does the same in Python)
  function patch(prev, delta) {
    var next = Object.assign({}, prev);
    for (var key in delta) {
      var value = delta[key];
      if (value !== null && typeof value === "object" && !Array.isArray(value)) {
        var items = prev[key].slice();
        for (var i in value) items[+i] = Object.assign({}, items[+i], value[i]);
        next[key] = items;
      } else {
        next[key] = value;
      }
    }
    return next;
  }
  function decode(stream) {
    var out = new Array(stream.length), cur = null;
    for (var i = 0; i < stream.length; i++) {
      cur = i === 0 ? stream[0] : patch(cur, stream[i]);
      out[i] = cur;
    }
    return out;
  }
  var publicFrames = decode(film.public);
  var ownFrames = {};
  Object.keys(film.own).forEach(function (s) { ownFrames[s] = decode(film.own[s]); });
  var secretFrames = film.secret ? decode(film.secret) : null;

  // What the perspective shows of seat s at step k: its own part, or null where hidden.
  function ownOf(k, s) {
    if (persp !== "truth" && String(s) !== persp) return null;
    var own = ownFrames[String(s)];
    return own ? own[k] : null;
  }
  function stackOf(k, s) {
    if (persp === "truth") return secretFrames ? secretFrames[k].stacks[s] : null;
    var own = ownOf(k, s);
    return own ? own.stack : null;
  }

  // ---- state of the page
  var perspectives = film.perspectives.map(String);
  var persp = perspectives[0];
  var step = 0;
  var timer = null;

  function seatName(s) { return s >= 0 && s < seats ? names[s] : "seat " + s; }
  function dot(s) {
    var d = text("span", null, {"class": "seat-dot"});
    d.style.background = colours[s];
    return d;
  }
  function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); return node; }
  function cardName(kind) { return film.card_names[kind] || "card " + kind; }
  function chip(kind, label) {
    return text("span", label, {"class": "card k" + kind, title: cardName(kind)});
  }
  function handChips(counts) {
    var box = text("span", null, {"class": "chips hand"});
    counts.forEach(function (n, kind) { if (n) box.appendChild(chip(kind, n + " " + cardName(kind))); });
    if (!box.firstChild) box.appendChild(text("span", "no cards", {"class": "muted"}));
    return box;
  }
  function ticketList(indices) {
    if (!indices.length) return text("span", "none", {"class": "muted"});
    var box = text("span", null, {"class": "tickets"});
    indices.forEach(function (t) { box.appendChild(text("span", film.tickets[t] || "ticket #" + t, {"class": "ticket"})); });
    return box;
  }
  // A seat's tickets at step k as its own view tells them (film.progress: [step, done, open]
  // whenever they change): completed so far (a tick) or not yet.
  function progressAt(k, s) {
    var changes = (film.progress || {})[String(s)] || [], found = null;
    for (var i = 0; i < changes.length && changes[i][0] <= k; i++) found = changes[i];
    return found;
  }
  function progressList(k, s, fallback) {
    var now = progressAt(k, s);
    if (!now) return ticketList(fallback);
    if (!now[1].length && !now[2].length) return text("span", "none", {"class": "muted"});
    var box = text("span", null, {"class": "tickets"});
    now[1].forEach(function (t) {
      box.appendChild(text("span", "\u2713 " + (film.tickets[t] || "ticket #" + t),
        {"class": "ticket done", title: "completed so far", "data-ticket": t}));
    });
    now[2].forEach(function (t) {
      box.appendChild(text("span", film.tickets[t] || "ticket #" + t,
        {"class": "ticket open", title: "not completed yet", "data-ticket": t}));
    });
    return box;
  }
  function signed(n) { return (n > 0 ? "+" : n < 0 ? "\u2212" : "\u00b1") + Math.abs(n); }
  function plural(n, noun) { return n + " " + noun + (n === 1 ? "" : "s"); }
  function faultsShown() {
    return film.faults.filter(function (f) { return persp === "truth" || String(f.seat) === persp; });
  }

  // ---- header
  $("title").textContent = film.title + " (" + film.variant + ")";
  $("meta").textContent = names.join(" \u00b7 ") + " \u2014 game " + film.game_id +
    (film.seed !== undefined ? ", seed " + film.seed : "") + ", " + N + " decisions";
  var select = $("seat");
  perspectives.forEach(function (p) {
    var label = p === "truth" ? "whole truth" : "seat " + p + ": " + seatName(+p) + " (what it saw)";
    select.appendChild(text("option", label, {value: p}));
  });
  var notes = $("notes");
  function note(words, cls) { notes.appendChild(text("span", words, {"class": "note " + (cls || "")})); }
  if (perspectives.indexOf("truth") < 0) {
    note("This file holds only what seat " + perspectives[0] + " saw: its view at each step, built by the engine's own view.");
  }
  if (isBoard && film.board.schematic) {
    note("schematic layout: the map data has no board coordinates", "schematic");
  }
  if (film.differs) note("The record differs from its replay (" + film.differs + "); shown: the replay.", "fault");

  // ---- the board (board games): drawn once by the shared board script (web/assets/board.js),
  // the owners updated per step
  var board = null;
  function drawBoard() {
    board = TTR.drawBoard($("stage"), film.board, colours, seatName);
  }
  function updateBoard(k) {
    var just = {};
    film.claims[k].forEach(function (r) { just[r] = true; });
    board.update(TTR.boardOwners(publicFrames[k].players), just);
  }

  // ---- the card game: each seat's Railyard and On-the-Track stack
  function drawTableau(k) {
    var stage = clear($("stage"));
    var frame = publicFrames[k];
    var grid = text("div", null, {"class": "tableau"});
    frame.players.forEach(function (p) {
      var mat = text("div", null, {"class": "mat panel", "data-seat": p.seat});
      mat.style.borderTopColor = colours[p.seat];
      var head = text("h3");
      head.appendChild(dot(p.seat));
      head.appendChild(text("span", seatName(p.seat)));
      mat.appendChild(head);
      mat.appendChild(text("div", "Railyard", {"class": "label"}));
      var rows = text("div", null, {"class": "railyard"});
      p.railyard.forEach(function (n, colour) {
        var locos = p.railyard_locomotives[colour];
        var row = text("div", null, {"class": "yard-row"});
        row.appendChild(text("span", cardName(colour), {"class": "yard-colour"}));
        var cards = text("span", null, {"class": "chips"});
        for (var i = 0; i < n; i++) cards.appendChild(chip(colour, ""));
        for (var j = 0; j < locos; j++) cards.appendChild(chip(8, ""));
        row.appendChild(cards);
        if (n || locos) row.appendChild(text("span", n + (locos ? " + " + locos + " loco" : ""), {"class": "muted"}));
        rows.appendChild(row);
      });
      mat.appendChild(rows);
      var stack = stackOf(k, p.seat);
      var onTrack = text("div", null, {"class": "stack"});
      onTrack.appendChild(text("span", "On the Track: " + plural(p.stack_size, "card") +
        (stack ? "" : " (face down)") + " ", {"class": "label"}));
      if (stack) onTrack.appendChild(handChips(stack));
      mat.appendChild(onTrack);
      var done = text("div", null, {"class": "completed"});
      done.appendChild(text("span", "Completed: ", {"class": "label"}));
      done.appendChild(ticketList(p.completed));
      mat.appendChild(done);
      grid.appendChild(mat);
    });
    stage.appendChild(grid);
  }

  // ---- the table: face-up row, decks
  function drawTable(k) {
    var frame = publicFrames[k];
    var box = clear($("table"));
    var row = text("div", null, {"class": "row"});
    row.appendChild(text("span", "Face up: ", {"class": "label"}));
    var chips = text("span", null, {"class": "chips face-up"});
    frame.face_up.forEach(function (c) {
      chips.appendChild(c < 0 ? text("span", "empty", {"class": "card empty"}) : chip(c, cardName(c)));
    });
    row.appendChild(chips);
    box.appendChild(row);
    var discards = frame.discards.reduce(function (a, b) { return a + b; }, 0);
    var deck = (isBoard ? "Deck: " : "Deck " + frame.deck_number + ": ") + plural(frame.deck_size, "card") +
      " \u00b7 discards: " + discards + " \u00b7 ticket deck: " + frame.ticket_deck_size;
    box.appendChild(text("div", deck, {"class": "decks"}));
    if (frame.to_act < 0) {
      box.appendChild(text("div", "Game over (" + String(frame.end_reason).replace(/_/g, " ") + ")", {"class": "over"}));
    } else if (frame.last_round >= 0) {
      box.appendChild(text("div", "Final round: " + plural(frame.last_round, "turn") + " left", {"class": "over"}));
    }
  }

  // ---- the seats: score, counts, and what the perspective may see of hands and tickets
  function drawPlayers(k) {
    var frame = publicFrames[k];
    var box = clear($("players"));
    frame.players.forEach(function (p) {
      var own = ownOf(k, p.seat);
      var panel = text("div", null, {"class": "player panel", id: "player-" + p.seat, "data-seat": p.seat});
      panel.style.borderLeftColor = colours[p.seat];
      if (frame.to_act === p.seat) panel.classList.add("to-act");
      var head = text("div", null, {"class": "player-head"});
      head.appendChild(dot(p.seat));
      head.appendChild(text("strong", seatName(p.seat), {"class": "name"}));
      if (frame.to_act === p.seat) head.appendChild(text("span", "to act", {"class": "tag"}));
      head.appendChild(text("span", film.score_label + ": ", {"class": "muted score-label"}));
      head.appendChild(text("b", String(film.scores[k][p.seat]), {"class": "score", "data-score": p.seat}));
      panel.appendChild(head);
      var facts = [plural(p.hand_size, "card"), plural(p.tickets, "ticket") + " in hand"];
      if (isBoard) facts.push(plural(p.trains, film.board.piece) + " left", plural(p.routes.length, "route"));
      else facts.push("stack " + p.stack_size);
      panel.appendChild(text("div", facts.join(" \u00b7 "), {"class": "facts muted"}));
      if (own) {
        var hand = text("div", null, {"class": "line"});
        hand.appendChild(text("span", "Hand: ", {"class": "label"}));
        hand.appendChild(handChips(own.hand));
        panel.appendChild(hand);
        var tickets = text("div", null, {"class": "line"});
        tickets.appendChild(text("span", "Tickets: ", {"class": "label"}));
        tickets.appendChild(progressList(k, p.seat, own.tickets));
        panel.appendChild(tickets);
        if (own.offered.length) {
          var offered = text("div", null, {"class": "line"});
          offered.appendChild(text("span", "Offered: ", {"class": "label"}));
          offered.appendChild(ticketList(own.offered));
          panel.appendChild(offered);
        }
      } else if (p.tickets_pending) {
        panel.appendChild(text("div", plural(p.tickets_pending, "ticket") + " offered", {"class": "line muted"}));
      }
      box.appendChild(panel);
    });
  }

  // ---- the step in words, the log, the faults, the chart, the final table
  function stepHead(k) {
    if (k === 0) return "Step 0: the deal";
    var s = film.steps[k];
    var phase = PHASES[s[2]] === undefined ? s[2] : PHASES[s[2]];
    return "Step " + k + " \u00b7 turn " + s[0] + " \u00b7 " + seatName(s[1]) + (phase ? " \u00b7 " + phase : "");
  }
  function stepLines(k) {
    return film.log[persp][k].map(function (i) { return film.lines[i]; });
  }
  var faultsAt = {};
  var outputAt = {};  // step -> the lines bots wrote for that decision, "name > line"
  function indexFaults() {
    faultsAt = {};
    faultsShown().forEach(function (f) { (faultsAt[f.step] = faultsAt[f.step] || []).push(f); });
    outputAt = {};
    (film.output || []).forEach(function (o) {
      if (persp !== "truth" && String(o.seat) !== persp) return;
      var at = outputAt[o.step] = outputAt[o.step] || [];
      o.lines.forEach(function (line) { at.push(seatName(o.seat) + " > " + line); });
    });
  }
  function drawNow(k) {
    $("now-head").textContent = stepHead(k);
    var list = clear($("now-lines"));
    // a decision's faults came before the move it ended with (show.py prints them so too)
    (faultsAt[k] || []).forEach(function (f) { list.appendChild(text("li", f.text, {"class": "fault"})); });
    stepLines(k).forEach(function (line) { list.appendChild(text("li", line)); });
    (outputAt[k] || []).forEach(function (line) { list.appendChild(text("li", line, {"class": "output"})); });
    if (!list.firstChild) list.appendChild(text("li", "(nothing this seat was told)", {"class": "muted"}));
  }
  var logNodes = [];
  function drawLog() {
    var log = clear($("log"));
    logNodes = [];
    var frag = document.createDocumentFragment();
    for (var k = 0; k <= N; k++) {
      var entry = text("div", null, {"class": "entry", "data-step": k});
      entry.appendChild(text("div", stepHead(k), {"class": "entry-head"}));
      (faultsAt[k] || []).forEach(function (f) {
        entry.appendChild(text("div", f.text, {"class": "entry-line fault"}));
        entry.classList.add("has-fault");
      });
      stepLines(k).forEach(function (line) { entry.appendChild(text("div", line, {"class": "entry-line"})); });
      (outputAt[k] || []).forEach(function (line) {
        entry.appendChild(text("div", line, {"class": "entry-line output"}));
      });
      logNodes.push(entry);
      frag.appendChild(entry);
    }
    log.appendChild(frag);
  }
  $("log").addEventListener("click", function (e) {
    var node = e.target.closest ? e.target.closest(".entry") : null;
    if (node) go(+node.getAttribute("data-step"));
  });
  function drawFaults() {
    var list = clear($("faults"));
    var shown = faultsShown();
    // no faults: a plain "none", not a numbered list of one item reading "none"
    $("no-faults").hidden = shown.length > 0;
    list.hidden = !shown.length;
    shown.forEach(function (f) {
      var s = film.steps[f.step];
      var item = text("li", null, {"class": "fault-item", "data-step": f.step});
      item.appendChild(text("a", "step " + f.step + " (turn " + s[0] + ")", {href: "#step=" + f.step + "&seat=" + persp}));
      item.appendChild(text("span", " " + f.text, {"class": "fault"}));
      item.addEventListener("click", function (e) { e.preventDefault(); go(f.step); });
      list.appendChild(item);
    });
    var ticks = clear($("ticks"));
    shown.forEach(function (f) {
      var t = text("span", null, {"class": "tick", title: f.text});
      t.style.left = (N ? f.step / N * 100 : 0) + "%";
      ticks.appendChild(t);
    });
  }
  var chart = null;
  var finalTotal = {};
  film.outcome.rows.forEach(function (row) { finalTotal[row.seat] = row.total; });
  function drawChart() {
    chart = TTR.chart($("chart"), {
      width: 460, height: 190, xLabel: "step (" + film.score_label + "), then the final total",
      series: names.map(function (name, s) {
        var points = film.scores.map(function (row, k) { return [k, row[s]]; });
        points.push([N + 1, finalTotal[s]]);  // the last point: the final table's total
        return {name: name, colour: colours[s], points: points};
      }),
      marks: faultsShown().map(function (f) { return {x: f.step, colour: "#c01048", title: "step " + f.step + ": " + f.text}; })
    });
    Array.prototype.forEach.call($("chart").querySelectorAll(".series"), function (line, s) {
      line.setAttribute("data-final", finalTotal[s]);
    });
  }
  function drawFinal(k) {
    var box = clear($("final"));
    if (k !== N) {
      box.appendChild(text("p", "The final scores are shown at the last step.", {"class": "muted"}));
      return;
    }
    var o = film.outcome;
    box.appendChild(text("h2", "Final scores after " + plural(o.turns, "turn") + " (" + String(o.end_reason).replace(/_/g, " ") + ")"));
    box.appendChild(TTR.outcomeTable(o, colours));
    // why: every seat's tickets and bonuses (the outcome is sent to every seat at the end)
    box.appendChild(text("h3", "Why: tickets and bonuses"));
    (o.details || []).forEach(function (d) {
      var seatBox = text("div", null, {"class": "why panel", "data-seat": d.seat});
      seatBox.style.borderLeftColor = colours[d.seat];
      var head = text("div", null, {"class": "player-head"});
      head.appendChild(dot(d.seat));
      head.appendChild(text("strong", seatName(d.seat)));
      head.appendChild(text("span", d.total + " points", {"class": "muted"}));
      seatBox.appendChild(head);
      [["Completed: ", d.completed, "done"], ["Failed: ", d.failed, "failed"]].forEach(function (row) {
        var line = text("div", null, {"class": "line"});
        line.appendChild(text("span", row[0], {"class": "label"}));
        if (!row[1].length) line.appendChild(text("span", "none", {"class": "muted"}));
        row[1].forEach(function (tp) {
          line.appendChild(text("span", (film.tickets[tp[0]] || "ticket #" + tp[0]) + " " + signed(tp[1]),
            {"class": "ticket " + row[2], "data-ticket": tp[0], "data-points": tp[1]}));
        });
        seatBox.appendChild(line);
      });
      var parts = text("div", null, {"class": "line parts"});
      parts.appendChild(text("span", "Total: ", {"class": "label"}));
      parts.appendChild(text("span", d.parts.map(function (p) { return p[0] + " " + signed(p[1]); }).join(" \u00b7 ")));
      seatBox.appendChild(parts);
      box.appendChild(seatBox);
    });
  }

  // ---- moving
  var slider = $("slider");
  slider.max = N;
  function writeHash() {
    var hash = "#step=" + step + "&seat=" + persp;
    if (location.hash === hash) return;
    try { history.replaceState(null, "", hash); } catch (e) { location.replace(hash); }
  }
  function go(k) {
    k = Math.max(0, Math.min(N, k | 0));
    step = k;
    if (isBoard) updateBoard(k); else drawTableau(k);
    drawTable(k);
    drawPlayers(k);
    drawNow(k);
    drawFinal(k);
    slider.value = k;
    $("position").textContent = "step " + k + " / " + N;
    if (chart) chart.cursor(k);
    logNodes.forEach(function (n) { n.classList.remove("current"); });
    var current = logNodes[k];
    if (current) {
      current.classList.add("current");
      var log = $("log");
      if (current.offsetTop < log.scrollTop || current.offsetTop + current.offsetHeight > log.scrollTop + log.clientHeight) {
        log.scrollTop = current.offsetTop - log.clientHeight / 3;
      }
    }
    writeHash();
  }
  function setPerspective(p) {
    if (perspectives.indexOf(p) < 0) return;
    persp = p;
    select.value = p;
    document.body.setAttribute("data-perspective", p);
    indexFaults();
    drawLog();
    drawFaults();
    drawChart();
    go(step);
  }
  function stop() {
    if (timer !== null) clearInterval(timer);
    timer = null;
    $("play").textContent = "play";
    $("play").setAttribute("aria-pressed", "false");
  }
  function play() {
    if (timer !== null) { stop(); return; }
    if (step >= N) go(0);
    $("play").textContent = "pause";
    $("play").setAttribute("aria-pressed", "true");
    timer = setInterval(function () {
      if (step >= N) { stop(); return; }
      go(step + 1);
    }, 1000 / +$("speed").value);
  }
  $("first").addEventListener("click", function () { stop(); go(0); });
  $("back").addEventListener("click", function () { stop(); go(step - 1); });
  $("forward").addEventListener("click", function () { stop(); go(step + 1); });
  $("last").addEventListener("click", function () { stop(); go(N); });
  $("play").addEventListener("click", play);
  $("speed").addEventListener("change", function () { if (timer !== null) { stop(); play(); } });
  slider.addEventListener("input", function () { stop(); go(+slider.value); });
  select.addEventListener("change", function () { setPerspective(select.value); });
  document.addEventListener("keydown", function (e) {
    var tag = e.target && e.target.tagName;
    if (tag === "INPUT" || tag === "SELECT" || tag === "TEXTAREA" || e.altKey || e.ctrlKey || e.metaKey) return;
    if (e.key === "ArrowRight") { stop(); go(step + 1); }
    else if (e.key === "ArrowLeft") { stop(); go(step - 1); }
    else if (e.key === "Home") { stop(); go(0); }
    else if (e.key === "End") { stop(); go(N); }
    else if (e.key === " " && tag !== "BUTTON") { play(); }
    else return;
    e.preventDefault();
  });
  function readHash() {
    var params = {};
    location.hash.replace(/^#/, "").split("&").forEach(function (part) {
      var kv = part.split("=");
      if (kv.length === 2) params[decodeURIComponent(kv[0])] = decodeURIComponent(kv[1]);
    });
    return params;
  }
  window.addEventListener("hashchange", function () {
    var params = readHash();
    if (params.seat !== undefined && params.seat !== persp && perspectives.indexOf(params.seat) >= 0) {
      setPerspective(params.seat);
    }
    if (params.step !== undefined && +params.step !== step) go(+params.step);
  });

  // ---- start
  if (isBoard) drawBoard();
  var start = readHash();
  if (start.step !== undefined && /^\d+$/.test(start.step)) step = Math.min(+start.step, N);
  setPerspective(start.seat !== undefined && perspectives.indexOf(start.seat) >= 0 ? start.seat : persp);
  window.TTR_READY_MS = performance.now();  // since navigation started (bench/viewer.py)
  window.TTR_READY = true;
  document.body.setAttribute("data-ready", "1");
})();
