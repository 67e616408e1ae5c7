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

  // Each city's name goes where it crosses the fewest tracks (a name over a track hides the
  // cars under its halo): of eight places around the city, the one that overlaps the least
  // track, other names and cities, inside the board; ties keep the first (north-east). A
  // second ring a little farther out is tried where every near place crosses a track.
  // Names are a layer of their own above the cities, so no later city covers one.
  var PLACES = [[8, -8, "start"], [-8, -8, "end"], [8, 17, "start"], [-8, 17, "end"],
    [0, -11, "middle"], [0, 21, "middle"], [10, 4, "start"], [-10, 4, "end"]];
  PLACES = PLACES.concat(PLACES.map(function (p) {
    return [p[0] * 1.7, p[1] < 0 ? p[1] - 7 : p[1] > 10 ? p[1] + 7 : p[1], p[2], 1];
  }));
  function clipped(seg, box) {
    // the length of segment seg inside box (Liang-Barsky clipping)
    var x0 = seg[0], y0 = seg[1], dx = seg[2] - x0, dy = seg[3] - y0, t0 = 0, t1 = 1;
    var p = [-dx, dx, -dy, dy], q = [x0 - box[0], box[2] - x0, y0 - box[1], box[3] - y0];
    for (var i = 0; i < 4; i++) {
      if (p[i] === 0) { if (q[i] < 0) return 0; continue; }
      var t = q[i] / p[i];
      if (p[i] < 0) { if (t > t1) return 0; if (t > t0) t0 = t; }
      else { if (t < t0) return 0; if (t < t1) t1 = t; }
    }
    return (t1 - t0) * Math.sqrt(dx * dx + dy * dy);
  }
  function overlap(a, z) {
    var w = Math.min(a[2], z[2]) - Math.max(a[0], z[0]), h = Math.min(a[3], z[3]) - Math.max(a[1], z[1]);
    return w > 0 && h > 0 ? w * h : 0;
  }
  function placeLabels(layer, b, px, W, H) {
    var segments = b.routes.map(function (r) {
      var a = px(b.cities[r[0]]), z = px(b.cities[r[1]]);
      return [a[0], a[1], z[0], z[1], r[4] < 0 ? 5 : 9];  // half the drawn width, with a margin
    });
    var spots = b.cities.map(function (c) {
      var p = px(c), r = c.attraction ? 14 : 8;  // the circle, or the attraction's star
      return [p[0] - r, p[1] - r, p[0] + r, p[1] + r];
    });
    var placed = [];
    b.cities.forEach(function (c) {
      var p = px(c);
      var label = TTR.svg("text", {"class": "city-name"}, layer);
      label.textContent = c.name;
      var width = label.getComputedTextLength ? label.getComputedTextLength() : 0;
      if (!width) width = 7 * c.name.length;  // not laid out (a hidden stage): an estimate
      var best = null, bestCost = Infinity;
      PLACES.forEach(function (place, rank) {
        var x = p[0] + place[0], y = p[1] + place[1];
        var left = place[2] === "start" ? x : place[2] === "end" ? x - width : x - width / 2;
        var box = [left - 1, y - 10, left + width + 1, y + 3];
        var cost = rank * 0.01 + (place[3] ? 20 : 0);
        if (box[0] < 0 || box[1] < 0 || box[2] > W || box[3] > H) cost += 1000;
        segments.forEach(function (s) {
          var m = s[4];
          cost += 10 * clipped(s, [box[0] - m, box[1] - m, box[2] + m, box[3] + m]);
        });
        spots.forEach(function (spot) { cost += overlap(box, spot); });
        placed.forEach(function (other) { cost += 10 * overlap(box, other); });
        if (cost < bestCost) { bestCost = cost; best = [x, y, place[2], box]; }
      });
      label.setAttribute("x", best[0].toFixed(1));
      label.setAttribute("y", best[1].toFixed(1));
      label.setAttribute("text-anchor", best[2]);
      placed.push(best[3]);
    });
  }

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
    });
    placeLabels(TTR.svg("g", {"class": "labels"}, svg), b, px, W, H);
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
