// ttr play --human: the page of the human's seat (ttr_arena/pages/human/__init__.py).
// Everything it shows comes from `state`, which the server makes only from what this seat's
// bot received over the wire (its view, legal actions, events, outcome). It long-polls
// `state?since=V` and answers a decision with `POST act {decision, action}` (the index of one
// legal action). Every name, ticket and event is set with textContent.
(function () {
  "use strict";
  var $ = function (id) { return document.getElementById(id); };
  var text = TTR.text;
  var PROMPTS = {
    setup_tickets: "Choose the tickets you keep",
    keep_tickets: "Choose the tickets you keep",
    turn: "Your turn: draw cards, claim a route or draw tickets",
    second_card: "Your second card: from the deck or the row (not a face-up Locomotive)"
  };
  var CARD_PROMPTS = {
    turn: "Your turn: draw cards, place cards in your Railyard or draw tickets"
  };

  var game = null;       // the static part: the map, the names, this seat (StartGame)
  var st = null;         // the newest state
  var version = 0;
  var board = null;
  var chosenRoute = -1;  // the route whose payments are shown
  var claimsOpen = false;  // the list of claimable routes unfolded
  var claimsBefore = 0;    // how many claims the page had shown at your previous decision
  var claimsNow = 0;
  var sending = false;
  var errors = 0;

  function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); return node; }
  function plural(n, noun) { return n + " " + noun + (n === 1 ? "" : "s"); }
  function seatName(s) { return game && s >= 0 && s < game.names.length ? game.names[s] : "seat " + s; }
  function cardName(kind) { return game.card_names[kind] || "card " + kind; }
  function ticketName(t) { return (st.tickets || {})[String(t)] || "ticket #" + t; }
  function dot(s) {
    var d = text("span", null, {"class": "seat-dot"});
    d.style.background = game.seat_colours[s];
    return d;
  }
  function chip(kind, label) {
    return text("span", label, {"class": "card k" + kind, title: cardName(kind)});
  }
  function handChips(counts) {
    var box = text("span", null, {"class": "chips hand"});
    counts.forEach(function (n, kind) {
      if (n) {
        var c = chip(kind, n + " " + cardName(kind));
        c.setAttribute("data-kind", kind);
        c.setAttribute("data-count", n);
        box.appendChild(c);
      }
    });
    if (!box.firstChild) box.appendChild(text("span", "no cards", {"class": "muted"}));
    return box;
  }
  function ticketList(indices, cls) {
    if (!indices.length) return text("span", "none", {"class": "muted"});
    var box = text("span", null, {"class": "tickets"});
    indices.forEach(function (t) {
      box.appendChild(text("span", ticketName(t), {"class": "ticket " + (cls || ""), "data-ticket": t}));
    });
    return box;
  }
  function legalOf(kind) {
    return st.legal.map(function (a, i) { return [a, i]; }).filter(function (x) { return x[0].kind === kind; });
  }
  function button(label, index, attrs) {
    var b = text("button", label, Object.assign({type: "button", "data-action": index}, attrs || {}));
    b.disabled = sending;
    b.addEventListener("click", function () { send(index); });
    return b;
  }

  // ---- answering
  function showError(message) { $("error").textContent = message || ""; }
  function send(index) {
    if (sending || st.decision === null) return;
    sending = true;
    showError("");
    document.body.setAttribute("data-sending", "1");
    fetch("act", {method: "POST", headers: {"Content-Type": "application/json"},
      body: JSON.stringify({decision: st.decision, action: index})})
      .then(function (r) { return r.json().then(function (body) { return [r.ok, body]; }); })
      .then(function (res) {
        if (!res[0] || !res[1].ok) {
          sending = false;
          document.body.removeAttribute("data-sending");
          showError("Not taken: " + (res[1].error || "refused"));
          draw();
        }
      })
      .catch(function () {
        sending = false;
        document.body.removeAttribute("data-sending");
        showError("Not sent: the game's server cannot be reached.");
      });
  }

  // ---- drawing
  function drawHeader() {
    $("title").textContent = game.title + " (" + game.variant + ")";
    $("meta").textContent = game.names.join(" \u00b7 ") + " \u2014 you are " + seatName(game.seat) +
      " \u00b7 clock: " + game.clock[0] / 1000 + " s a move, " + game.clock[1] / 1000 + " s of bank";
  }

  function drawStage() {
    if (game.family === "board") {
      if (!board) board = TTR.drawBoard($("stage"), game.board, game.seat_colours, seatName);
      var owner = {};
      if (st.view) owner = TTR.boardOwners(st.view.players);
      st.claims.forEach(function (c) { owner[c[0]] = c[1]; });
      // outlined: the routes claimed since your previous decision
      var just = {};
      st.claims.slice(claimsBefore).forEach(function (c) { just[c[0]] = true; });
      board.update(owner, just);
      var claimable = {};
      legalOf("claim").forEach(function (x) { claimable[x[0].route] = true; });
      board.nodes.forEach(function (node, r) {
        node.g.classList.toggle("claimable", !!claimable[r]);
        node.g.classList.toggle("chosen", r === chosenRoute);
      });
      return;
    }
    // the card game: every seat's Railyard and stack, as the view tells them
    var stage = clear($("stage"));
    if (!st.view) return;
    var grid = text("div", null, {"class": "tableau"});
    st.view.players.forEach(function (p) {
      var mat = text("div", null, {"class": "mat panel", "data-seat": p.seat});
      mat.style.borderTopColor = game.seat_colours[p.seat];
      var head = text("h3");
      head.appendChild(dot(p.seat));
      head.appendChild(text("span", seatName(p.seat) + (p.seat === game.seat ? " (you)" : "")));
      mat.appendChild(head);
      mat.appendChild(text("div", "Railyard", {"class": "label"}));
      var rows = text("div", null, {"class": "railyard"});
      p.railyard.forEach(function (n, colour) {
        var locos = p.railyard_locomotives[colour];
        var row = text("div", null, {"class": "yard-row", "data-colour": colour, "data-cards": n, "data-locos": locos});
        row.appendChild(text("span", cardName(colour), {"class": "yard-colour"}));
        var cards = text("span", null, {"class": "chips"});
        for (var i = 0; i < n; i++) cards.appendChild(chip(colour, ""));
        for (var j = 0; j < locos; j++) cards.appendChild(chip(8, ""));
        row.appendChild(cards);
        if (n || locos) row.appendChild(text("span", n + (locos ? " + " + locos + " loco" : ""), {"class": "muted"}));
        rows.appendChild(row);
      });
      mat.appendChild(rows);
      var own = p.seat === game.seat && st.view.stack;
      var onTrack = text("div", null, {"class": "stack"});
      onTrack.appendChild(text("span", "On the Track: " + plural(p.stack_size, "card") + (own ? " " : " (face down)"), {"class": "label"}));
      if (own) onTrack.appendChild(handChips(st.view.stack));
      mat.appendChild(onTrack);
      var done = text("div", null, {"class": "completed"});
      done.appendChild(text("span", "Completed: ", {"class": "label"}));
      done.appendChild(ticketList(p.completed));
      mat.appendChild(done);
      grid.appendChild(mat);
    });
    stage.appendChild(grid);
    if (game.big_cities) stage.appendChild(text("p", "Big Cities: " + game.big_cities.join(", "), {"class": "muted"}));
  }

  function drawTable() {
    var box = clear($("table"));
    if (!st.view) return;
    var v = st.view;
    var row = text("div", null, {"class": "row"});
    row.appendChild(text("span", "Face up: ", {"class": "label"}));
    var chips = text("span", null, {"class": "chips face-up", id: "row"});
    var takeable = {};
    legalOf("face_up").forEach(function (x) { takeable[x[0].slot] = x[1]; });
    v.face_up.forEach(function (c, slot) {
      var node;
      if (c < 0) node = text("span", "empty", {"class": "card empty"});
      else if (takeable[slot] !== undefined) {
        node = button(cardName(c), takeable[slot], {"class": "card k" + c + " take", title: "take " + cardName(c)});
      } else node = chip(c, cardName(c));
      node.setAttribute("data-slot", slot);
      node.setAttribute("data-card", c);
      chips.appendChild(node);
    });
    row.appendChild(chips);
    box.appendChild(row);
    var decks = text("div", null, {"class": "decks"});
    var blind = legalOf("blind");
    var deckWords = (game.family === "board" ? "Deck: " : "Deck " + v.deck_number + ": ") + plural(v.deck_size, "card");
    if (blind.length) decks.appendChild(button(deckWords + " \u2014 draw", blind[0][1], {id: "deck", "data-size": v.deck_size}));
    else decks.appendChild(text("span", deckWords, {id: "deck", "data-size": v.deck_size}));
    var discards = v.discards.reduce(function (a, b) { return a + b; }, 0);
    decks.appendChild(text("span", " \u00b7 discards: " + discards + " \u00b7 ", {"class": "muted"}));
    var tickets = legalOf("tickets");
    var ticketWords = "ticket deck: " + v.ticket_deck_size;
    if (tickets.length) decks.appendChild(button(ticketWords + " \u2014 draw tickets", tickets[0][1], {id: "ticket-deck", "data-size": v.ticket_deck_size}));
    else decks.appendChild(text("span", ticketWords, {id: "ticket-deck", "data-size": v.ticket_deck_size}));
    box.appendChild(decks);
    if (v.last_round >= 0 && !st.outcome) {
      box.appendChild(text("div", "Final round: " + plural(v.last_round, "turn") + " left", {"class": "over"}));
    }
  }

  function drawMe() {
    var box = clear($("me"));
    if (!st.view) return;
    var v = st.view;
    box.appendChild(text("h3", "You: " + seatName(game.seat)));
    var hand = text("div", null, {"class": "line", id: "hand"});
    hand.appendChild(text("span", "Hand: ", {"class": "label"}));
    hand.appendChild(handChips(v.hand));
    box.appendChild(hand);
    var tickets = text("div", null, {"class": "line", id: "my-tickets"});
    tickets.appendChild(text("span", "Tickets: ", {"class": "label"}));
    var progress = st.progress || [[], v.tickets];
    if (!v.tickets.length) tickets.appendChild(text("span", "none", {"class": "muted"}));
    progress[0].forEach(function (t) {
      tickets.appendChild(text("span", "\u2713 " + ticketName(t), {"class": "ticket done", title: "completed so far", "data-ticket": t}));
    });
    progress[1].forEach(function (t) {
      tickets.appendChild(text("span", ticketName(t), {"class": "ticket open", title: "not completed yet", "data-ticket": t}));
    });
    box.appendChild(tickets);
    if (v.offered.length) {
      var keeps = legalOf("keep");
      var offered = text("div", null, {"class": "line", id: "offered"});
      offered.appendChild(text("div", keeps.length ? "Offered: tick the tickets you keep" : "Offered:", {"class": "label"}));
      var least = keeps.length ? Math.min.apply(null, keeps.map(function (x) { return x[0].tickets.length; })) : 0;
      v.offered.forEach(function (t) {
        var label = text("label", null, {"class": "offer"});
        var box2 = text("input", null, {type: "checkbox", "data-ticket": t});
        box2.checked = true;
        box2.disabled = !keeps.length || sending;
        box2.addEventListener("change", drawKeep);
        label.appendChild(box2);
        label.appendChild(text("span", " " + ticketName(t), {"class": "ticket"}));
        offered.appendChild(label);
      });
      if (keeps.length) {
        var keep = text("button", "Keep", {type: "button", id: "keep"});
        keep.addEventListener("click", function () {
          var i = keepIndex();
          if (i !== null) send(i);
        });
        offered.appendChild(keep);
        offered.appendChild(text("span", " keep at least " + least, {"class": "muted", id: "keep-rule"}));
      }
      box.appendChild(offered);
      drawKeep();
    }
  }
  // The legal KeepTickets whose tickets are exactly the ticked ones, or null.
  function keepIndex() {
    var ticked = [];
    Array.prototype.forEach.call(document.querySelectorAll("#offered input[type=checkbox]"), function (c) {
      if (c.checked) ticked.push(+c.getAttribute("data-ticket"));
    });
    ticked.sort(function (a, b) { return a - b; });
    var found = null;
    legalOf("keep").forEach(function (x) {
      if (x[0].tickets.join(",") === ticked.join(",")) found = x[1];
    });
    return found;
  }
  function drawKeep() {
    var keep = $("keep");
    if (!keep) return;
    var i = keepIndex();
    keep.disabled = sending || i === null;
    keep.setAttribute("data-action", i === null ? "" : i);
  }

  function drawPlayers() {
    var box = clear($("players"));
    if (!st.view) return;
    var v = st.view;
    v.players.forEach(function (p) {
      var panel = text("div", null, {"class": "player panel", id: "player-" + p.seat, "data-seat": p.seat,
        "data-hand": p.hand_size, "data-tickets": p.tickets, "data-pending": p.tickets_pending});
      panel.style.borderLeftColor = game.seat_colours[p.seat];
      var acting = v.to_act === p.seat && !st.outcome;
      if (acting) panel.classList.add("to-act");
      var head = text("div", null, {"class": "player-head"});
      head.appendChild(dot(p.seat));
      head.appendChild(text("strong", seatName(p.seat) + (p.seat === game.seat ? " (you)" : ""), {"class": "name"}));
      if (acting) head.appendChild(text("span", "to act", {"class": "tag"}));
      var score = game.family === "board" ? p.route_points : p.ticket_points;
      head.appendChild(text("span", game.score_label + ": ", {"class": "muted score-label"}));
      head.appendChild(text("b", String(score), {"class": "score", "data-score": score}));
      panel.appendChild(head);
      var facts = [plural(p.hand_size, "card"), plural(p.tickets, "ticket") + " in hand"];
      if (p.tickets_pending) facts.push(plural(p.tickets_pending, "ticket") + " offered");
      if (game.family === "board") {
        facts.push(plural(p.trains, game.board.piece) + " left", plural(p.routes.length, "route"));
        panel.setAttribute("data-trains", p.trains);
      } else facts.push("stack " + p.stack_size);
      panel.appendChild(text("div", facts.join(" \u00b7 "), {"class": "facts muted"}));
      box.appendChild(panel);
    });
  }

  function drawPrompt() {
    var prompt = $("prompt"), choice = clear($("choice")), clock = $("clock");
    clock.textContent = "";
    if (st.outcome) {
      var best = st.outcome.rows[0];
      var tied = st.outcome.rows.filter(function (r) { return r.rank === best.rank; });
      prompt.textContent = "The game is over: " + tied.map(function (r) { return seatName(r.seat); }).join(" and ") +
        (tied.length > 1 ? " win with " : " wins with ") + plural(best.total, "point") + ".";
      return;
    }
    if (st.closed) { prompt.textContent = "The game was stopped."; return; }
    if (!st.started) { prompt.textContent = "Waiting for the game to start\u2026"; return; }
    if (st.decision === null) {
      var who = st.view && st.view.to_act >= 0 ? seatName(st.view.to_act) : "the others";
      prompt.textContent = sending ? "Sent; waiting for the referee\u2026" : "Waiting for " + who + "\u2026";
      if (st.missed) clock.textContent = "Your time ran out " + plural(st.missed, "time") + ": the referee played the safe default.";
      return;
    }
    var words = (game.family === "card" && CARD_PROMPTS[st.view.phase]) || PROMPTS[st.view.phase] || st.view.phase;
    prompt.textContent = words;
    if (st.clock) {
      clock.textContent = "Time: " + Math.round(st.clock[0] / 1000) + " s for this move, then " +
        Math.round(st.clock[1] / 1000) + " s left in your bank.";
    }
    if (st.rejection) {
      choice.appendChild(text("div", "The referee rejected your previous answer (" + st.rejection[0] + "): " + st.rejection[1], {"class": "fault", id: "rejection"}));
    }
    if (game.family === "board") {
      var claims = legalOf("claim");
      if (claims.length) {
        var routes = {};
        claims.forEach(function (x) { (routes[x[0].route] = routes[x[0].route] || []).push(x); });
        if (chosenRoute >= 0 && routes[chosenRoute]) {
          var pay = text("div", null, {"class": "payments", id: "payments"});
          pay.appendChild(text("span", "Claim " + game.board.routes[chosenRoute][5] + " paying: ", {"class": "label"}));
          routes[chosenRoute].forEach(function (x) {
            pay.appendChild(button(x[0].paid, x[1], {"class": "pay", "data-route": chosenRoute}));
          });
          var cancel = text("button", "cancel", {type: "button"});
          cancel.addEventListener("click", function () { chosenRoute = -1; draw(); });
          pay.appendChild(cancel);
          choice.appendChild(pay);
        }
        var list = text("details", null, {"class": "claimable-list", id: "claimable"});
        var count = Object.keys(routes).length;
        list.appendChild(text("summary", "Click a dashed route on the board to claim it, or pick one of the " +
          plural(count, "route") + " you can claim here", {"class": "label"}));
        if (claimsOpen) list.setAttribute("open", "");
        list.addEventListener("toggle", function () { claimsOpen = list.open; });
        Object.keys(routes).forEach(function (r) {
          var b = text("button", game.board.routes[+r][5], {type: "button", "class": "route-pick", "data-route": r});
          b.disabled = sending;
          b.addEventListener("click", function () { pickRoute(+r); });
          list.appendChild(b);
        });
        choice.appendChild(list);
      }
    } else {
      // placements into the Railyard: one row per colour's row, then the mixes
      var suits = legalOf("suit"), mixes = legalOf("mix");
      if (suits.length || mixes.length) {
        var yard = text("div", null, {"class": "placements", id: "placements"});
        yard.appendChild(text("div", "Place cards in your Railyard:", {"class": "label"}));
        var byColour = {};
        suits.forEach(function (x) { (byColour[x[0].colour] = byColour[x[0].colour] || []).push(x); });
        Object.keys(byColour).forEach(function (c) {
          var row = text("div", null, {"class": "place-row", "data-colour": c});
          row.appendChild(chip(+c, cardName(+c) + " row"));
          byColour[c].forEach(function (x) { row.appendChild(button(x[0].paid, x[1], {"class": "place"})); });
          yard.appendChild(row);
        });
        if (mixes.length) {
          var mixRow = text("div", null, {"class": "place-row mixes"});
          mixRow.appendChild(text("span", "a mix (one card in each of 3 rows): ", {"class": "label"}));
          mixes.forEach(function (x) { mixRow.appendChild(button(x[0].paid, x[1], {"class": "place"})); });
          yard.appendChild(mixRow);
        }
        choice.appendChild(yard);
      }
    }
    legalOf("pass").forEach(function (x) { choice.appendChild(button("Pass (nothing else is legal)", x[1])); });
  }
  function pickRoute(r) {
    chosenRoute = r;
    draw();
    var pay = $("payments");
    if (pay && pay.scrollIntoView) pay.scrollIntoView({block: "nearest"});
  }

  function drawMoves() {
    var list = clear($("move-list"));
    $("moves-head").textContent = st.decision === null ? "All legal moves (none now)" :
      "All legal moves (" + st.legal.length + ")";
    st.legal.forEach(function (a, i) {
      var item = text("li");
      item.appendChild(button(a.words, i, {"data-key": a.key, "class": "move"}));
      list.appendChild(item);
    });
  }

  function drawLog() {
    var log = $("log");
    var shown = log.childNodes.length;
    for (var i = shown; i < st.log.length; i++) log.appendChild(text("div", st.log[i], {"class": "entry-line"}));
    if (st.log.length > shown) log.scrollTop = log.scrollHeight;
  }

  function drawFinal() {
    var box = clear($("final"));
    var o = st.outcome;
    if (!o) return;
    box.appendChild(text("h2", "Final scores"));
    box.appendChild(TTR.outcomeTable(o, game.seat_colours));
    o.details.forEach(function (d) {
      var line = text("div", null, {"class": "line why", "data-seat": d.seat});
      line.appendChild(dot(d.seat));
      line.appendChild(text("span", seatName(d.seat) + ": "));
      d.completed.forEach(function (tp) { line.appendChild(text("span", ticketName(tp[0]) + " +" + tp[1], {"class": "ticket done"})); });
      d.failed.forEach(function (tp) { line.appendChild(text("span", ticketName(tp[0]) + " " + tp[1], {"class": "ticket failed"})); });
      box.appendChild(line);
    });
    if (game.record) {
      box.appendChild(text("p", "Record: " + game.record, {id: "record"}));
      box.appendChild(text("p", "Watch it again: ttr replay view " + game.record, {"class": "muted"}));
    }
  }

  function draw() {
    if (!st) return;
    if (st.started && game) {
      drawHeader();
      drawStage();
      drawTable();
      drawMe();
      drawPlayers();
    }
    drawPrompt();
    drawMoves();
    drawLog();
    drawFinal();
    var body = document.body;
    var yours = st.decision !== null && !sending;
    document.title = (yours ? "\u25b6 Your move \u2014 " : "") + (game ? game.title + " \u2014 " : "") +
      "TTR Arena: your seat";
    body.setAttribute("data-version", st.version);
    if (st.decision !== null && !sending) body.setAttribute("data-decision", st.decision);
    else body.removeAttribute("data-decision");
    if (st.outcome) body.setAttribute("data-over", "1");
  }

  // ---- the long poll
  function poll() {
    fetch("state?since=" + version + (game ? "&game=0" : ""), {cache: "no-store"})
      .then(function (r) {
        if (!r.ok) throw new Error("status " + r.status);
        return r.json();
      })
      .then(function (data) {
        errors = 0;
        if (data.game) game = data.game;
        if (data.decision !== null && data.decision !== (st && st.decision)) {
          claimsBefore = claimsNow;  // a new decision: what was new at the last one is old
          claimsNow = data.claims.length;
        }
        if (data.decision !== (st && st.decision)) {
          sending = false;
          document.body.removeAttribute("data-sending");
          chosenRoute = -1;
        }
        if (data.decision !== null && st && st.decision !== data.decision) showError("");
        st = data;
        version = data.version;
        draw();
        if (data.outcome || data.closed) return;
        poll();
      })
      .catch(function () {
        errors += 1;
        if (errors > 5) {
          $("prompt").textContent = "The game's server is gone (ttr play has ended or was stopped).";
          return;
        }
        setTimeout(poll, 500 * errors);
      });
  }
  if (TTR.data().format !== "ttr-human/1") return;
  document.addEventListener("click", function (e) {
    var node = e.target.closest ? e.target.closest(".route.claimable") : null;
    if (node) pickRoute(+node.getAttribute("data-route"));
  });
  poll();
  window.TTR_HUMAN = {send: send};
  document.body.setAttribute("data-ready", "1");
})();
