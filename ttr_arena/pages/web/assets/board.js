// The board of a board game as SVG, shared by the replay viewer (ttr replay view) and the
// human seat's page (ttr play --human): cities at their coordinates (or the schematic layout
// the Python side computed), every route as `length` cars in its colour, the two tracks of a
// double route side by side, Tourist Attractions as stars. `board` is what
// ttr_arena.pages.viewer._board makes. Every name is set with textContent.
(function () {
  "use strict";
  var ROUTE_COLOURS = ["#d7301f", "#f28e2b", "#e8c31c", "#4e9a3a", "#2f6db3", "#e377c2",
    "#2b2b2b", "#f4f4f4"];
  var GRAY = "#a3a3a3";

  // drawBoard(stage, board, colours, seatName) draws into `stage` and returns
  // {nodes: [{g, title, cars, fill, label, owner}] by route index, update(owner, just)}:
  // update takes {route: seat} and {route: true} (the routes to outline) and recolours.
  function drawBoard(stage, b, colours, seatName) {
    var W = 1000, H = 650, pad = 24;
    var svg = TTR.svg("svg", {viewBox: "0 0 " + W + " " + H, id: "board", "class": "board"}, stage);
    function px(c) { return [pad + c.x * (W - 2 * pad), pad + c.y * (H - 2 * pad)]; }
    var tracks = TTR.svg("g", {"class": "tracks"}, svg);
    var nodes = [];
    b.routes.forEach(function (r, i) {
      var a = px(b.cities[r[0]]), z = px(b.cities[r[1]]);
      var dx = z[0] - a[0], dy = z[1] - a[1], len = Math.sqrt(dx * dx + dy * dy) || 1;
      var ux = dx / len, uy = dy / len, nx = -uy, ny = ux;
      var off = r[4] < 0 ? 0 : (i < r[4] ? -4.6 : 4.6);
      var trim = 9, gap = 2, width = 7, length = r[2];
      var usable = len - 2 * trim;
      var car = Math.max((usable - gap * (length - 1)) / length, 2);
      var g = TTR.svg("g", {"class": "route", "data-route": i, "data-length": length}, tracks);
      var title = TTR.svg("title", {}, g);
      title.textContent = r[5];
      var fill = r[3] < 0 ? GRAY : ROUTE_COLOURS[r[3]];
      var cars = [];
      for (var c = 0; c < length; c++) {
        var s0 = trim + c * (car + gap), s1 = s0 + car;
        var cx0 = a[0] + ux * s0 + nx * off, cy0 = a[1] + uy * s0 + ny * off;
        var cx1 = a[0] + ux * s1 + nx * off, cy1 = a[1] + uy * s1 + ny * off;
        var h = width / 2;
        var pts = [[cx0 + nx * h, cy0 + ny * h], [cx1 + nx * h, cy1 + ny * h],
          [cx1 - nx * h, cy1 - ny * h], [cx0 - nx * h, cy0 - ny * h]];
        cars.push(TTR.svg("polygon", {points: pts.map(function (p) { return p[0].toFixed(1) + "," + p[1].toFixed(1); }).join(" "),
          fill: fill, "class": "car"}, g));
      }
      nodes.push({g: g, title: title, cars: cars, fill: fill, label: r[5], owner: -1});
    });
    var towns = TTR.svg("g", {"class": "cities"}, svg);
    b.cities.forEach(function (c) {
      var p = px(c);
      if (c.attraction) {
        var star = [];
        for (var k = 0; k < 10; k++) {
          var rad = k % 2 ? 6 : 14, ang = Math.PI / 5 * k - Math.PI / 2;
          star.push((p[0] + rad * Math.cos(ang)).toFixed(1) + "," + (p[1] + rad * Math.sin(ang)).toFixed(1));
        }
        var s = TTR.svg("polygon", {points: star.join(" "), "class": "attraction"}, towns);
        TTR.svg("title", {}, s).textContent = c.name + ": Tourist Attraction";
      }
      TTR.svg("circle", {cx: p[0], cy: p[1], r: 6, "class": "city"}, towns);
      var east = c.x > 0.85;  // a name to the right of an eastern city would leave the board
      var label = TTR.svg("text", {x: p[0] + (east ? -8 : 8), y: p[1] - 8, "class": "city-name",
        "text-anchor": east ? "end" : "start"}, towns);
      label.textContent = c.name;
    });
    var legend = TTR.text("div", null, {"class": "legend muted"});
    legend.appendChild(TTR.text("span", "Tracks in their route colours (gray: any colour); a claimed track is filled in its seat's colour."));
    if (b.cities.some(function (c) { return c.attraction; })) {
      legend.appendChild(TTR.text("span", "\u2605 Tourist Attraction (+" + b.attraction_points +
        " per attraction a seat's routes touch)", {"class": "attraction-legend"}));
    }
    stage.appendChild(legend);

    function update(owner, just) {
      nodes.forEach(function (node, i) {
        var o = owner[i] === undefined ? -1 : owner[i];
        if (o !== node.owner) {
          node.owner = o;
          var fill = o < 0 ? node.fill : colours[o];
          node.cars.forEach(function (c) { c.setAttribute("fill", fill); });
          if (o < 0) {
            node.g.removeAttribute("data-owner");
            node.title.textContent = node.label;
          } else {
            node.g.setAttribute("data-owner", o);
            node.title.textContent = node.label + ": claimed by " + seatName(o);
          }
        }
        node.g.classList.toggle("claimed", o >= 0);
        node.g.classList.toggle("just", !!just[i]);
      });
    }
    return {svg: svg, nodes: nodes, update: update};
  }

  // Who owns which route, from a view's public part: {route: seat}.
  function owners(players) {
    var owner = {};
    players.forEach(function (p) { p.routes.forEach(function (r) { owner[r] = p.seat; }); });
    return owner;
  }

  TTR.drawBoard = drawBoard;
  TTR.boardOwners = owners;
  TTR.ROUTE_COLOURS = ROUTE_COLOURS;
})();
