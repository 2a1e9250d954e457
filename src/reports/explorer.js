// Cartograph's graph explorer: draws the property graph embedded in the page
// (the JSON of #cartograph-graph-data, shape in src/reports/explorer.rs) as an
// SVG the reader can pan, zoom, search and filter. No library and nothing
// fetched: the page must open offline, from a CI artefact or a mail.
//
// Only what is shown is laid out, in the browser, by a layered (Sugiyama)
// layout: producers left of the schemas they produce, schemas left of the
// operations that consume them. A big graph starts on its most connected
// schemas and the operations most linked to them; searching or clicking a
// node shows its neighbourhood and its chain (what must be created before it).
(function () {
  'use strict';

  var root = document.getElementById('gx');
  var dataEl = document.getElementById('cartograph-graph-data');
  if (!root || !dataEl) return;
  root.removeAttribute('hidden');
  Array.prototype.forEach.call(document.querySelectorAll('.gx-help'), function (p) { p.removeAttribute('hidden'); });

  var SVGNS = 'http://www.w3.org/2000/svg';
  // How much is drawn at once: enough to read, little enough to lay out in
  // milliseconds and to stay legible.
  var LIMITS = {
    wholeGraph: 90,     // graphs up to this many nodes are drawn whole
    overview: 40,       // else the overview shows this many nodes,
    overviewSchemas: 14, // of which at most this many schemas (the most connected),
    backbone: 3,        // with this many links per node
    group: 30,          // producers, consumers or linked nodes drawn around a focus
    chainNodes: 60,     // nodes of the chain drawn
    chainDepth: 4,      // operations back along the chain
    perSchema: 5,       // producers per schema drawn beyond the first step
    list: 150,          // entries per list in the side panel
    suggestions: 14
  };
  var NODE_FONT = '600 12.5px system-ui, -apple-system, "Segoe UI", Roboto, Arial, sans-serif';
  var SUB_FONT = '10.5px ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", monospace';
  var METHOD_COLOURS = {
    GET: '#1a7f37', POST: '#0969da', PUT: '#9a6700', PATCH: '#bc4c00', DELETE: '#cf222e',
    QUERY: '#8250df', MUTATION: '#bf3989', SUBSCRIPTION: '#6639ba'
  };
  var KIND_LABELS = {
    produces: 'produces', consumes: 'consumes', equivalent: 'equivalent', same_endpoint: 'same endpoint'
  };
  var KIND_COLOURS = { produces: '#0969da', consumes: '#6e7781', equivalent: '#8250df', same_endpoint: '#bc4c00' };
  var ORIGIN_DASH = { spec: '', inferred: '7 4', observed: '12 3 2 3' };

  var DATA;
  try {
    DATA = JSON.parse(dataEl.textContent);
  } catch (err) {
    fail('The embedded graph could not be read: ' + err.message);
    return;
  }
  if (!DATA || !Array.isArray(DATA.graphs) || DATA.graphs.length === 0) {
    fail('No graph was recorded for this run.');
    return;
  }
  var KINDS = DATA.kinds, ORIGINS = DATA.origins;
  var graphs;
  try {
    graphs = DATA.graphs.map(prepare);
  } catch (err) {
    fail('The embedded graph is malformed: ' + err.message);
    return;
  }

  var state = {
    g: 0,
    focus: -1,
    filters: {
      kind: { produces: true, consumes: true, equivalent: true, same_endpoint: false },
      origin: { spec: true, inferred: true, observed: true },
      state: { active: true, suspended: true, candidate: true }
    },
    view: { x: 0, y: 0, k: 1 },
    bounds: null,
    drawn: null
  };

  function fail(message) {
    root.setAttribute('data-state', 'error');
    root.textContent = message;
  }

  // ---------------------------------------------------------------- model

  function prepare(raw) {
    var nodes = raw.nodes.map(function (n, i) {
      var id = n[0];
      var name = n[2] ? n[2] : id.slice(id.indexOf(':') + 1);
      var method = n[3] || '', path = n[4] || '';
      return {
        i: i, id: id, op: n[1] === 0, name: name, method: method, path: path,
        deprecated: n[5] === 1, ins: [], outs: [],
        key: (name + ' ' + method + ' ' + path).toLowerCase()
      };
    });
    var edges = raw.edges.map(function (e, i) {
      var c = Array.isArray(e[7]) ? { flows: e[7][0], successes: e[7][1], exercised: e[7][2] === 1 } : null;
      var edge = {
        i: i, kind: KINDS[e[0]], s: e[1], t: e[2], origin: ORIGINS[e[3]],
        suspended: e[4] === 1, candidate: e[4] === 2, score: e[5], label: e[6] || '', cov: c, evidence: e[8] || []
      };
      nodes[edge.s].outs.push(edge);
      nodes[edge.t].ins.push(edge);
      return edge;
    });
    var ops = 0;
    nodes.forEach(function (n) { if (n.op) ops++; });
    return { title: raw.title, format: raw.format, nodes: nodes, edges: edges, ops: ops };
  }

  function G() { return graphs[state.g]; }

  function edgeId(g, e) { return e.kind + ':' + g.nodes[e.s].id + '->' + g.nodes[e.t].id; }

  function visible(e) {
    var f = state.filters;
    return f.kind[e.kind] && f.origin[e.origin] && f.state[e.candidate ? 'candidate' : e.suspended ? 'suspended' : 'active'];
  }

  function exercised(e) { return !!(e.cov && e.cov.exercised); }

  // Best edges first: exercised, then stated by the description, then by score.
  function byMerit(a, b) {
    return (exercised(b) - exercised(a)) ||
      (ORIGINS.indexOf(a.origin) === 0 ? 0 : 1) - (ORIGINS.indexOf(b.origin) === 0 ? 0 : 1) ||
      (b.score - a.score) || (a.i - b.i);
  }

  function inEdges(n, kind) {
    return n.ins.filter(function (e) { return e.kind === kind && visible(e); }).sort(byMerit);
  }
  function outEdges(n, kind) {
    return n.outs.filter(function (e) { return e.kind === kind && visible(e); }).sort(byMerit);
  }

  // What the view shows: nodes with their role, the edges among them, the
  // highlighted edges, and what was left out (said in the note and panel).
  function computeView() {
    var g = G();
    var role = new Map();
    var hl = new Set();
    var info = null, note = '', backbone = null;
    if (state.focus < 0) {
      if (g.nodes.length <= LIMITS.wholeGraph) {
        g.nodes.forEach(function (n) { role.set(n.i, 'plain'); });
        note = 'The whole graph: ' + g.ops + ' operations, ' + (g.nodes.length - g.ops) +
          ' schemas. Search or click a node to follow its chain.';
      } else {
        // The most connected schemas and the operations most linked to
        // them: by degree alone, hub schemas (or hub operations) fill the
        // view and there is no producer → schema → consumer picture left.
        var deg = new Array(g.nodes.length).fill(0);
        g.edges.forEach(function (e) { if (visible(e)) { deg[e.s]++; deg[e.t]++; } });
        var byDegree = function (a, b) { return deg[b.i] - deg[a.i] || (a.name < b.name ? -1 : 1); };
        var schemas = g.nodes.filter(function (n) { return !n.op && deg[n.i] > 0; })
          .sort(byDegree).slice(0, LIMITS.overviewSchemas);
        schemas.forEach(function (n) { role.set(n.i, 'plain'); });
        var links = new Array(g.nodes.length).fill(0);
        g.edges.forEach(function (e) {
          if (!visible(e)) return;
          if (role.has(e.s)) links[e.t]++;
          if (role.has(e.t)) links[e.s]++;
        });
        var ops = g.nodes.filter(function (n) { return n.op && links[n.i] > 0; })
          .sort(function (a, b) { return links[b.i] - links[a.i] || byDegree(a, b); })
          .slice(0, LIMITS.overview - schemas.length);
        ops.forEach(function (n) { role.set(n.i, 'plain'); });
        // Too few of either (an API of few schemas): the rest by degree.
        g.nodes.filter(function (n) { return deg[n.i] > 0 && !role.has(n.i); }).sort(byDegree)
          .slice(0, Math.max(0, LIMITS.overview - role.size))
          .forEach(function (n) { role.set(n.i, 'plain'); });
        // Hubs link to nearly every other node shown: drawn whole, that is a
        // mat. Each node keeps its strongest links (and at least one),
        // produces and consumes before the undirected kinds.
        var directedFirst = function (a, b) {
          var da = a.kind === 'produces' || a.kind === 'consumes', db = b.kind === 'produces' || b.kind === 'consumes';
          return (db - da) || byMerit(a, b);
        };
        var among = g.edges.filter(function (e) {
          return visible(e) && role.has(e.s) && role.has(e.t) && e.s !== e.t;
        }).sort(directedFirst);
        var kept = new Map();
        backbone = among.filter(function (e) {
          var a = kept.get(e.s) || 0, b = kept.get(e.t) || 0;
          if ((a < LIMITS.backbone && b < LIMITS.backbone) || a === 0 || b === 0) {
            kept.set(e.s, a + 1);
            kept.set(e.t, b + 1);
            return true;
          }
          return false;
        });
        var shownOps = 0;
        role.forEach(function (_, i) { if (g.nodes[i].op) shownOps++; });
        note = 'A big graph (' + g.nodes.length + ' nodes, ' + g.edges.length + ' edges): its ' +
          count(role.size - shownOps, 'most connected schema') + ' and the ' + count(shownOps, 'operation') +
          ' most linked to them, with ' + backbone.length + ' of the ' + among.length +
          ' links among them (the strongest of each node). Search for an operation or schema, or click one, to see its neighbourhood and chain.';
      }
    } else {
      info = neighbourhood(g, state.focus, role, hl);
      note = focusNote(g, info);
    }
    var edges = backbone || g.edges.filter(function (e) { return visible(e) && role.has(e.s) && role.has(e.t) && e.s !== e.t; });
    return { role: role, edges: edges, hl: hl, info: info, note: note };
  }

  // The focus, its chain (upstream: the schemas it consumes, their producers,
  // their inputs' producers…), its consumers (downstream) and its linked
  // nodes (equivalent schemas, operations on the same path).
  function neighbourhood(g, f, role, hl) {
    var F = g.nodes[f];
    var info = {
      focus: F, producers: [], consumers: [], linked: [], chain: [], inputs: [], orphans: new Set(),
      hidden: { chain: 0 }, notDrawn: 0, depthCut: false
    };
    role.set(f, 'focus');
    var chainCount = 0;
    function addUp(i) {
      if (role.has(i)) return true;
      if (chainCount >= LIMITS.chainNodes) return false;
      role.set(i, 'up');
      chainCount++;
      return true;
    }
    // Breadth first, one operation level at a time; each schema's producers
    // are listed once, the focus never among them (it cannot come first).
    var hiddenChain = new Set(), expanded = new Set();
    var frontier = [f], seen = new Set([f]), depth = 0;
    while (frontier.length && depth < LIMITS.chainDepth) {
      var next = [];
      var level = { depth: depth + 1, steps: [] };
      frontier.forEach(function (x) {
        var X = g.nodes[x];
        var schemas = X.op
          ? inEdges(X, 'consumes').map(function (e) { return { s: e.s, via: e }; })
          : [{ s: x, via: null }];
        schemas.forEach(function (sv) {
          if (sv.via) {
            if (!addUp(sv.s)) { hiddenChain.add(sv.s); return; }
            hl.add(sv.via.i);
            if (x === f) info.inputs.push(sv.via);
          }
          if (expanded.has(sv.s)) return;
          expanded.add(sv.s);
          var producers = inEdges(g.nodes[sv.s], 'produces').filter(function (pe) { return pe.s !== f; });
          var step = { schema: g.nodes[sv.s], consumer: X, producers: [], more: 0 };
          if (producers.length === 0) info.orphans.add(sv.s);
          var cap = depth === 0 ? LIMITS.group : LIMITS.perSchema;
          producers.forEach(function (pe, k) {
            if (k >= cap || !addUp(pe.s)) {
              step.more++;
              hiddenChain.add(pe.s);
              return;
            }
            hl.add(pe.i);
            step.producers.push(g.nodes[pe.s]);
            if (!seen.has(pe.s)) { seen.add(pe.s); next.push(pe.s); }
          });
          level.steps.push(step);
        });
      });
      if (level.steps.length) info.chain.push(level);
      frontier = next;
      depth++;
    }
    info.depthCut = frontier.some(function (x) {
      return inEdges(g.nodes[x], 'consumes').some(function (e) { return !expanded.has(e.s); });
    });
    hiddenChain.forEach(function (i) { if (!role.has(i)) info.hidden.chain++; });

    // Downstream: what the focus feeds.
    var down = 0;
    function addDown(i) {
      if (role.has(i)) return true;
      if (down >= LIMITS.group) return false;
      role.set(i, 'down');
      down++;
      return true;
    }
    var fed = F.op ? outEdges(F, 'produces') : [{ t: f, i: -1 }];
    fed.forEach(function (pe) {
      if (pe.i >= 0) {
        if (!addDown(pe.t)) return;
        hl.add(pe.i);
      }
      outEdges(g.nodes[pe.t], 'consumes').forEach(function (ce) {
        if (ce.t === f) return;
        if (!addDown(ce.t)) return;
        hl.add(ce.i);
      });
    });

    // Linked: undirected edges at the focus.
    var linked = 0;
    F.ins.concat(F.outs).filter(function (e) {
      return (e.kind === 'equivalent' || e.kind === 'same_endpoint') && visible(e);
    }).sort(byMerit).forEach(function (e) {
      var other = e.s === f ? e.t : e.s;
      info.linked.push({ node: g.nodes[other], edge: e });
      if (!role.has(other)) {
        if (linked >= LIMITS.group) return;
        role.set(other, 'link');
        linked++;
      }
      hl.add(e.i);
    });

    // The panel lists every producer and consumer, drawn or not.
    info.producers = related(g, F.op ? inEdges(F, 'consumes').map(function (e) { return e.s; }) : [f], inEdges, 'produces', f);
    info.consumers = related(g, F.op ? outEdges(F, 'produces').map(function (e) { return e.t; }) : [f], outEdges, 'consumes', f);
    var notDrawn = new Set();
    hiddenChain.forEach(function (i) { notDrawn.add(i); });
    info.producers.concat(info.consumers).forEach(function (n) { notDrawn.add(n.i); });
    info.linked.forEach(function (l) { notDrawn.add(l.node.i); });
    role.forEach(function (_, i) { notDrawn.delete(i); });
    info.notDrawn = notDrawn.size;
    return info;
  }

  // The operations at the other end of `kind` edges of these schemas, best first, once each.
  function related(g, schemas, edgesOf, kind, f) {
    var out = [], seen = new Set([f]);
    schemas.forEach(function (s) {
      edgesOf(g.nodes[s], kind).forEach(function (e) {
        var o = kind === 'produces' ? e.s : e.t;
        if (!seen.has(o)) { seen.add(o); out.push(g.nodes[o]); }
      });
    });
    return out;
  }

  function focusNote(g, info) {
    var F = info.focus;
    var parts = [(F.op ? 'Operation ' : 'Schema ') + F.name + ': ' +
      count(info.producers.length, 'producer') + ', ' + count(info.consumers.length, 'consumer') +
      ', chain of ' + count(chainSize(info), 'node')];
    if (info.notDrawn) parts.push(info.notDrawn + ' more related nodes not drawn (see the lists on the right)');
    if (info.depthCut) parts.push('chain cut at ' + LIMITS.chainDepth + ' operations back');
    return parts.join('; ') + '.';
  }

  function chainSize(info) {
    var s = new Set();
    info.chain.forEach(function (l) {
      l.steps.forEach(function (st) {
        if (st.schema !== info.focus) s.add(st.schema);
        st.producers.forEach(function (p) { s.add(p); });
      });
    });
    return s.size;
  }

  function count(n, word) { return n + ' ' + word + (n === 1 ? '' : 's'); }

  // ---------------------------------------------------------------- layout

  var measureCtx = null;
  function textWidth(text, font) {
    if (!measureCtx) {
      var c = document.createElement('canvas');
      measureCtx = c.getContext && c.getContext('2d');
    }
    if (!measureCtx) return text.length * 7;
    measureCtx.font = font;
    return measureCtx.measureText(text).width;
  }

  // Long names keep their informative end: the last three segments of a
  // dotted schema name (io.k8s.api.core.v1.Pod → …core.v1.Pod), both ends of
  // the rest.
  function shortName(name, op) {
    var max = op ? 44 : 30;
    if (name.length <= max) return name;
    if (!op && name.indexOf('.') >= 0) {
      var tail = name.split('.').slice(-3).join('.');
      if (tail.length <= max) return '…' + tail;
    }
    var keep = max - 1, head = Math.ceil(keep * 0.55);
    return name.slice(0, head) + '…' + name.slice(name.length - (keep - head));
  }

  function shortPath(path) {
    var max = 44;
    if (path.length <= max) return path;
    var cut = path.indexOf('/', path.length - max + 1);
    return '…' + (cut > 0 ? path.slice(cut) : path.slice(path.length - max + 1));
  }

  var GRAPHQL_METHODS = { QUERY: 1, MUTATION: 1, SUBSCRIPTION: 1 };

  function nodeBox(n) {
    var label = shortName(n.name, n.op);
    var sub = n.op && !GRAPHQL_METHODS[n.method] ? n.method + ' ' + shortPath(n.path) : '';
    var w = Math.max(textWidth(label, NODE_FONT), sub ? textWidth(sub, SUB_FONT) : 0);
    return {
      label: label, sub: sub,
      w: Math.ceil(w) + (n.op ? 28 : 34),
      h: sub ? 40 : 28
    };
  }

  // Layered layout of the nodes `ids` (graph indices) and `edges`:
  // 1. layers by the earliest step each node can exist (see below);
  // 2. dummy nodes on edges spanning several layers;
  // 3. barycentre sweeps to order each layer, keeping the order with fewest
  //    crossings;
  // 4. positions: layers left to right, each node pulled towards its
  //    neighbours' height with the order kept (average of the two one-sided
  //    placements).
  // Nodes without edges go in a grid below.
  function layout(g, ids, edges) {
    var n = ids.length;
    var loc = new Map();
    ids.forEach(function (v, k) { loc.set(v, k); });
    var box = ids.map(function (v) { return nodeBox(g.nodes[v]); });
    var name = ids.map(function (v) { return g.nodes[v].name; });
    var order0 = ids.map(function (_, k) { return k; }).sort(function (a, b) {
      return name[a] < name[b] ? -1 : name[a] > name[b] ? 1 : 0;
    });

    var directed = [], undirected = [];
    edges.forEach(function (e) {
      var a = loc.get(e.s), b = loc.get(e.t);
      if (e.kind === 'produces' || e.kind === 'consumes') directed.push({ e: e, a: a, b: b });
      else undirected.push({ e: e, a: a, b: b });
    });
    // 1. Layers: the earliest step at which each node can exist. An
    //    operation needs all its inputs (one step after the latest), a schema
    //    any one producer (one step after the earliest): producers → schemas
    //    → consumers read left to right, and a schema an operation produces
    //    again later is an edge back, not a reason to push everything right.
    //    (Longest-path layering would, and did: the demo spread over 11
    //    columns.)
    var isOp = ids.map(function (v) { return g.nodes[v].op; });
    var inputs = [], outputs = [], degree = new Int32Array(n);
    for (var k = 0; k < n; k++) { inputs.push([]); outputs.push([]); }
    directed.forEach(function (d) {
      if (d.a === d.b) return;
      degree[d.a]++;
      degree[d.b]++;
      // outputs[x]: what x makes possible; inputs[x]: what it waits for.
      if (outputs[d.a].indexOf(d.b) < 0) outputs[d.a].push(d.b);
      if (inputs[d.b].indexOf(d.a) < 0) inputs[d.b].push(d.a);
    });
    var layer = new Int32Array(n).fill(-1), waiting = new Int32Array(n), latest = new Int32Array(n);
    var buckets = [];
    function settle(v, l) {
      if (layer[v] >= 0) return;
      layer[v] = l;
      (buckets[l] = buckets[l] || []).push(v);
    }
    for (k = 0; k < n; k++) waiting[k] = inputs[k].length;
    order0.forEach(function (v) { if (waiting[v] === 0) settle(v, 0); });
    var settled = 0;
    for (;;) {
      for (var l = 0; l < buckets.length; l++) {
        var bucket = buckets[l] || [];
        for (var bi = 0; bi < bucket.length; bi++) {
          var v = bucket[bi];
          if (v < 0) continue;
          bucket[bi] = -1;
          settled++;
          outputs[v].forEach(function (w) {
            if (layer[w] >= 0) return;
            if (isOp[w]) {
              latest[w] = Math.max(latest[w], l);
              if (--waiting[w] === 0) settle(w, latest[w] + 1);
            } else {
              settle(w, l + 1);
            }
          });
        }
      }
      if (settled >= n) break;
      // Operations waiting on a cycle nothing outside feeds: start the one
      // that can start earliest, as if its unsettled inputs were given.
      var pick = -1, pickLayer = Infinity;
      order0.forEach(function (v) {
        if (layer[v] >= 0 || !isOp[v]) return;
        var at = 0;
        inputs[v].forEach(function (w) { if (layer[w] >= 0) at = Math.max(at, layer[w] + 1); });
        if (at < pickLayer) { pick = v; pickLayer = at; }
      });
      if (pick < 0) order0.forEach(function (v) { if (pick < 0 && layer[v] < 0) { pick = v; pickLayer = 0; } });
      settle(pick, pickLayer);
    }
    // A schema nothing produces (a request body built from scratch) sits just
    // before its first consumer, not at the far left.
    order0.forEach(function (v) {
      if (isOp[v] || inputs[v].length || !outputs[v].length) return;
      var min = Infinity;
      outputs[v].forEach(function (w) { min = Math.min(min, layer[w]); });
      layer[v] = Math.max(layer[v], min - 1);
    });
    // Nodes with only undirected edges join a neighbour's layer; the rest
    // without any edge go to the grid.
    var linkedTo = [];
    for (k = 0; k < n; k++) linkedTo.push([]);
    undirected.forEach(function (u) { linkedTo[u.a].push(u.b); linkedTo[u.b].push(u.a); });
    var placed = new Uint8Array(n), loose = [];
    for (k = 0; k < n; k++) placed[k] = degree[k] > 0 ? 1 : 0;
    var changed = true;
    while (changed) {
      changed = false;
      order0.forEach(function (v) {
        if (placed[v]) return;
        var other = linkedTo[v].filter(function (w) { return placed[w]; })[0];
        if (other !== undefined) { layer[v] = layer[other]; placed[v] = 1; changed = true; }
      });
    }
    // Components made only of undirected edges: operations of one path side by side.
    order0.forEach(function (v) {
      if (placed[v]) return;
      if (linkedTo[v].length) { layer[v] = g.nodes[ids[v]].op ? 0 : 1; placed[v] = 1; }
      else loose.push(v);
    });

    // No empty columns: source promotion can leave gaps.
    var usedLayers = [];
    for (k = 0; k < n; k++) if (placed[k]) usedLayers[layer[k]] = true;
    var renumber = [], next = 0;
    usedLayers.forEach(function (used, l) { if (used) renumber[l] = next++; });
    for (k = 0; k < n; k++) if (placed[k]) layer[k] = renumber[layer[k]];

    // 2. Virtual nodes: real ones first, then dummies along long edges.
    var vlayer = [], vw = [], vh = [], inLayers = [];
    for (k = 0; k < n; k++) {
      vlayer.push(layer[k]); vw.push(box[k].w); vh.push(box[k].h); inLayers.push(placed[k] === 1);
    }
    var up = [], downAdj = [];
    function ensure(i) { while (up.length <= i) { up.push([]); downAdj.push([]); } }
    ensure(n - 1);
    var routes = [];
    directed.concat(undirected).forEach(function (d) {
      if (d.a === d.b) return;
      var la = layer[d.a], lb = layer[d.b];
      var route = { e: d.e, a: d.a, b: d.b, chain: [] };
      routes.push(route);
      if (la === lb) return;
      var lo = la < lb ? d.a : d.b, hi = la < lb ? d.b : d.a;
      var prev = lo;
      for (var l = Math.min(la, lb) + 1; l < Math.max(la, lb); l++) {
        var dummy = vlayer.length;
        vlayer.push(l); vw.push(0); vh.push(0); inLayers.push(true);
        ensure(dummy);
        downAdj[prev].push(dummy); up[dummy].push(prev);
        route.chain.push(dummy);
        prev = dummy;
      }
      ensure(hi);
      downAdj[prev].push(hi); up[hi].push(prev);
      if (la > lb) route.chain.reverse();
    });
    var N = vlayer.length;
    ensure(N - 1);

    // 3. Ordering.
    var maxLayer = 0;
    for (k = 0; k < N; k++) if (inLayers[k]) maxLayer = Math.max(maxLayer, vlayer[k]);
    var layers = [];
    for (var l = 0; l <= maxLayer; l++) layers.push([]);
    // Initial order: depth first from the first layer, so related nodes start close.
    var seenOrder = new Uint8Array(N);
    function visit(v0) {
      var stack = [v0];
      while (stack.length) {
        var x = stack.pop();
        if (seenOrder[x]) continue;
        seenOrder[x] = 1;
        layers[vlayer[x]].push(x);
        for (var j = downAdj[x].length - 1; j >= 0; j--) stack.push(downAdj[x][j]);
        for (j = up[x].length - 1; j >= 0; j--) stack.push(up[x][j]);
      }
    }
    order0.forEach(function (v) { if (inLayers[v] && layer[v] === 0) visit(v); });
    order0.forEach(function (v) { if (inLayers[v]) visit(v); });
    for (k = n; k < N; k++) if (!seenOrder[k]) visit(k);

    var pos = new Float64Array(N);
    function index() { layers.forEach(function (L) { L.forEach(function (v, j) { pos[v] = j; }); }); }
    index();
    function crossings() {
      var total = 0;
      for (var l = 0; l < layers.length - 1; l++) {
        var segs = [];
        layers[l].forEach(function (v) { downAdj[v].forEach(function (w) { segs.push([pos[v], pos[w]]); }); });
        if (segs.length > 1500) return -1;
        segs.sort(function (a, b) { return a[0] - b[0] || a[1] - b[1]; });
        for (var i = 0; i < segs.length; i++) {
          for (var j = i + 1; j < segs.length; j++) {
            if (segs[j][0] > segs[i][0] && segs[j][1] < segs[i][1]) total++;
          }
        }
      }
      return total;
    }
    function sweep(L, neighbours) {
      var bary = new Map();
      L.forEach(function (v) {
        var nb = neighbours[v];
        if (!nb.length) { bary.set(v, pos[v]); return; }
        var s = 0;
        nb.forEach(function (w) { s += pos[w]; });
        bary.set(v, s / nb.length);
      });
      L.sort(function (a, b) { return bary.get(a) - bary.get(b) || pos[a] - pos[b]; });
      L.forEach(function (v, j) { pos[v] = j; });
    }
    var best = crossings(), bestLayers = layers.map(function (L) { return L.slice(); });
    for (var it = 0; it < 8 && best !== 0; it++) {
      for (l = 1; l < layers.length; l++) sweep(layers[l], up);
      for (l = layers.length - 2; l >= 0; l--) sweep(layers[l], downAdj);
      var c = crossings();
      if (c < 0) { bestLayers = layers.map(function (L) { return L.slice(); }); break; }
      if (c < best) { best = c; bestLayers = layers.map(function (L) { return L.slice(); }); }
    }
    layers = bestLayers;
    index();

    // 4. Coordinates.
    var GAP_X = 90, GAP_Y = 14, GAP_DUMMY = 6;
    var x = new Float64Array(N), y = new Float64Array(N);
    var colX = [], cx = 0;
    layers.forEach(function (L, li) {
      var w = 0;
      L.forEach(function (v) { w = Math.max(w, vw[v]); });
      colX[li] = cx + w / 2;
      L.forEach(function (v) { x[v] = cx + w / 2; });
      cx += w + GAP_X;
    });
    function sep(a, b) {
      return vh[a] / 2 + vh[b] / 2 + (vw[a] === 0 || vw[b] === 0 ? GAP_DUMMY : GAP_Y);
    }
    layers.forEach(function (L) {
      var yy = 0;
      L.forEach(function (v, j) { if (j) yy += sep(L[j - 1], v); y[v] = yy; });
    });
    function place(L, desired) {
      var m = L.length;
      if (!m) return;
      var fwd = new Float64Array(m), bwd = new Float64Array(m);
      for (var j = 0; j < m; j++) {
        fwd[j] = j ? Math.max(desired[j], fwd[j - 1] + sep(L[j - 1], L[j])) : desired[j];
      }
      for (j = m - 1; j >= 0; j--) {
        bwd[j] = j < m - 1 ? Math.min(desired[j], bwd[j + 1] - sep(L[j], L[j + 1])) : desired[j];
      }
      for (j = 0; j < m; j++) y[L[j]] = (fwd[j] + bwd[j]) / 2;
    }
    function pull(L, neighbours) {
      place(L, L.map(function (v) {
        var nb = neighbours(v);
        if (!nb.length) return y[v];
        var s = 0;
        nb.forEach(function (w) { s += y[w]; });
        return s / nb.length;
      }));
    }
    var both = function (v) { return up[v].concat(downAdj[v]); };
    for (it = 0; it < 6; it++) {
      for (l = 1; l < layers.length; l++) pull(layers[l], it < 2 ? function (v) { return up[v]; } : both);
      for (l = layers.length - 2; l >= 0; l--) pull(layers[l], it < 2 ? function (v) { return downAdj[v]; } : both);
    }
    var minY = Infinity, maxY = -Infinity, maxX = 0;
    for (k = 0; k < N; k++) {
      if (!inLayers[k]) continue;
      minY = Math.min(minY, y[k] - vh[k] / 2);
      maxY = Math.max(maxY, y[k] + vh[k] / 2);
      maxX = Math.max(maxX, x[k] + vw[k] / 2);
    }
    if (minY === Infinity) { minY = 0; maxY = -40; }
    for (k = 0; k < N; k++) y[k] -= minY;
    maxY -= minY;
    // A drawing much wider than the box is tall gets fitted by its width and
    // leaves the height empty: spread the rows (not the nodes) into it, so
    // the edges between them separate.
    var box0 = size(), want = maxX * (box0.h / box0.w) * 0.8;
    if (maxY > 0 && maxY < want) {
      var stretch = Math.min(2.5, want / maxY);
      for (k = 0; k < N; k++) y[k] *= stretch;
      maxY *= stretch;
    }

    // Loose nodes: a grid below the drawing, by name.
    if (loose.length) {
      var rowW = Math.max(maxX, 900), gx = 0, gy = maxY + 70, rowH = 0;
      loose.forEach(function (v) {
        if (gx > 0 && gx + vw[v] > rowW) { gx = 0; gy += rowH + 14; rowH = 0; }
        x[v] = gx + vw[v] / 2;
        y[v] = gy + vh[v] / 2;
        gx += vw[v] + 18;
        rowH = Math.max(rowH, vh[v]);
        maxX = Math.max(maxX, gx);
      });
      maxY = gy + rowH;
    }

    // Edge routes: from the side of one node, through its dummies, to the
    // side of the other; same-layer edges arc out to the right.
    var paths = routes.map(function (r) {
      var a = r.a, b = r.b, la = layer[a], lb = layer[b];
      var pts;
      if (la === lb && placed[a] && placed[b]) {
        var xa = x[a] + vw[a] / 2, xb = x[b] + vw[b] / 2;
        var bulge = 40 + Math.min(120, Math.abs(y[a] - y[b]) * 0.25);
        var xm = Math.max(xa, xb) + bulge;
        return {
          e: r.e, d: 'M' + f1(xa) + ',' + f1(y[a]) + ' C' + f1(xm) + ',' + f1(y[a]) + ' ' + f1(xm) + ',' + f1(y[b]) + ' ' + f1(xb) + ',' + f1(y[b]),
          mid: [xm - bulge * 0.25, (y[a] + y[b]) / 2]
        };
      }
      var forward = la < lb;
      pts = [[x[a] + (forward ? 1 : -1) * vw[a] / 2, y[a]]];
      r.chain.forEach(function (d) { pts.push([x[d], y[d]]); });
      pts.push([x[b] + (forward ? -1 : 1) * vw[b] / 2, y[b]]);
      var d = 'M' + f1(pts[0][0]) + ',' + f1(pts[0][1]);
      for (var j = 1; j < pts.length; j++) {
        var p = pts[j - 1], q = pts[j], mx = (p[0] + q[0]) / 2;
        d += ' C' + f1(mx) + ',' + f1(p[1]) + ' ' + f1(mx) + ',' + f1(q[1]) + ' ' + f1(q[0]) + ',' + f1(q[1]);
      }
      var mi = Math.floor((pts.length - 1) / 2);
      return { e: r.e, d: d, mid: [(pts[mi][0] + pts[mi + 1][0]) / 2, (pts[mi][1] + pts[mi + 1][1]) / 2] };
    });

    var nodesOut = ids.map(function (v, k) {
      return { i: v, x: x[k], y: y[k], box: box[k] };
    });
    return { nodes: nodesOut, paths: paths, width: maxX, height: maxY, crossings: best };
  }

  function f1(v) { return Math.round(v * 10) / 10; }

  // ---------------------------------------------------------------- drawing

  function el(tag, attrs, parent, text) {
    var e = document.createElementNS(SVGNS, tag);
    if (attrs) for (var k in attrs) if (attrs[k] !== null && attrs[k] !== undefined) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    if (parent) parent.appendChild(e);
    return e;
  }

  function h(tag, attrs, parent, text) {
    var e = document.createElement(tag);
    if (attrs) for (var k in attrs) if (attrs[k] !== null && attrs[k] !== undefined) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    if (parent) parent.appendChild(e);
    return e;
  }

  // The page's parts.
  root.textContent = '';
  root.setAttribute('data-state', 'drawing');
  var bar = h('div', { 'class': 'gx-bar' }, root);
  var select = null;
  if (graphs.length > 1) {
    var sl = h('label', null, bar, 'Graph ');
    select = h('select', { 'aria-label': 'Graph' }, sl);
    graphs.forEach(function (g, i) {
      h('option', { value: String(i) }, select, g.title + ' (' + g.format + '): ' + g.ops + ' operations');
    });
  }
  var searchWrap = h('div', { 'class': 'gx-search' }, bar);
  var search = h('input', {
    type: 'search', placeholder: 'Find an operation or schema ( / )', 'aria-label': 'Find an operation or schema',
    role: 'combobox', 'aria-autocomplete': 'list', 'aria-expanded': 'false', 'aria-controls': 'gx-sugg', autocomplete: 'off'
  }, searchWrap);
  var sugg = h('ul', { id: 'gx-sugg', 'class': 'gx-sugg', role: 'listbox', hidden: '' }, searchWrap);
  var btns = h('div', { 'class': 'gx-btns', role: 'group', 'aria-label': 'Zoom' }, bar);
  var zoomIn = h('button', { type: 'button', title: 'Zoom in (+)' }, btns, '+');
  var zoomOut = h('button', { type: 'button', title: 'Zoom out (−)' }, btns, '−');
  var fitBtn = h('button', { type: 'button', title: 'Fit the drawing to the box (0)' }, btns, 'Fit');
  var btns2 = h('div', { 'class': 'gx-btns' }, bar);
  var overviewBtn = h('button', { type: 'button', title: 'Back to the overview (Esc)' }, btns2, 'Overview');
  var fullBtn = h('button', { type: 'button', title: 'Use the whole window' }, btns2, 'Expand');

  var filtersBox = h('div', { 'class': 'gx-filters' }, root);
  function filterGroup(title, key, values, swatch) {
    var fs = h('fieldset', null, filtersBox);
    h('legend', null, fs, title);
    values.forEach(function (v) {
      var lab = h('label', null, fs);
      var cb = h('input', { type: 'checkbox' }, lab);
      cb.checked = state.filters[key][v];
      cb.addEventListener('change', function () {
        state.filters[key][v] = cb.checked;
        render(true);
      });
      if (swatch) lab.appendChild(swatch(v));
      lab.appendChild(document.createTextNode(' ' + (KIND_LABELS[v] || v)));
    });
  }
  function lineSwatch(colour, dash, width, arrow) {
    var s = el('svg', { width: 30, height: 10, 'aria-hidden': 'true' });
    el('line', { x1: 1, y1: 5, x2: arrow ? 24 : 29, y2: 5, stroke: colour, 'stroke-width': width || 1.6, 'stroke-dasharray': dash || null }, s);
    if (arrow) el('path', { d: 'M23,1 L29,5 L23,9 z', fill: colour }, s);
    return s;
  }
  filterGroup('Edges', 'kind', KINDS, function (k) {
    return lineSwatch(KIND_COLOURS[k], '', 2, k === 'produces' || k === 'consumes');
  });
  filterGroup('Origin', 'origin', ORIGINS, function (o) { return lineSwatch('#57606a', ORIGIN_DASH[o], 1.6, false); });
  filterGroup('State', 'state', ['active', 'suspended', 'candidate'], null);

  var noteBox = h('div', { 'class': 'gx-note', 'aria-live': 'polite' }, root);
  var canvas = h('div', { 'class': 'gx-canvas' }, root);
  var svg = el('svg', { role: 'img', 'aria-label': 'Property graph', tabindex: '0' }, canvas);
  var defs = el('defs', null, svg);
  [['produces', '#0969da'], ['consumes', '#6e7781'], ['ex', '#1a7f37']].forEach(function (m) {
    var mk = el('marker', {
      id: 'gx-arrow-' + m[0], viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 7, markerHeight: 7,
      orient: 'auto-start-reverse', markerUnits: 'userSpaceOnUse'
    }, defs);
    el('path', { d: 'M0,1 L10,5 L0,9 z', fill: m[1] }, mk);
  });
  var viewport = el('g', null, svg);
  var side = h('div', { 'class': 'gx-side', 'aria-live': 'polite' }, root);
  var legend = h('div', { 'class': 'gx-legend' }, root);

  function legendItem(svgEl, text) {
    var s = h('span', null, legend);
    s.appendChild(svgEl);
    s.appendChild(document.createTextNode(text));
  }
  (function buildLegend() {
    var op = el('svg', { width: 26, height: 16, 'aria-hidden': 'true' });
    el('rect', { x: 1, y: 2, width: 24, height: 12, rx: 3, fill: '#f0f7ff', stroke: '#54aeff' }, op);
    el('rect', { x: 1, y: 2, width: 4, height: 12, fill: '#1a7f37' }, op);
    legendItem(op, 'operation (strip: method)');
    var sc = el('svg', { width: 26, height: 16, 'aria-hidden': 'true' });
    el('polygon', { points: '6,2 20,2 25,8 20,14 6,14 1,8', fill: '#fff8c5', stroke: '#d4a72c' }, sc);
    legendItem(sc, 'schema');
    legendItem(lineSwatch('#1a7f37', '', 4, true), 'link the run exercised (values passed, consumer answered)');
    var ring = function (c) {
      var s = el('svg', { width: 18, height: 16, 'aria-hidden': 'true' });
      el('rect', { x: 2, y: 2, width: 14, height: 12, rx: 3, fill: '#fff', stroke: c, 'stroke-width': 3 }, s);
      return s;
    };
    legendItem(ring('#1f2328'), 'focus');
    legendItem(ring('#e16f24'), 'its chain (needed before it)');
    legendItem(ring('#1b7c83'), 'what it feeds');
    var orphan = el('svg', { width: 26, height: 16, 'aria-hidden': 'true' });
    el('polygon', { points: '6,2 20,2 25,8 20,14 6,14 1,8', fill: '#fffdf0', stroke: '#9a6700', 'stroke-dasharray': '3 2' }, orphan);
    legendItem(orphan, 'produced by no operation');
    var cov = DATA.coverage;
    h('span', { 'class': 'muted' }, legend, cov
      ? 'Links exercised: ' + cov.links_exercised + ' of ' + cov.links + '.'
      : 'No link coverage was recorded for this run.');
    h('span', { 'class': 'muted' }, legend, 'Faded: suspended edge or candidate equivalence. Dash: origin.');
  })();

  // ---------------------------------------------------------------- render

  function render(refit) {
    var t0 = performance.now();
    var g = G();
    var view = computeView();
    var ids = Array.from(view.role.keys());
    var lay = layout(g, ids, view.edges);
    var t1 = performance.now();
    draw(g, view, lay);
    state.bounds = { w: lay.width, h: lay.height };
    if (refit) initialView(lay);
    panel(g, view);
    var t2 = performance.now();
    noteBox.textContent = view.note;
    root.setAttribute('data-state', 'ready');
    root.setAttribute('data-nodes', String(ids.length));
    root.setAttribute('data-edges', String(view.edges.length));
    root.setAttribute('data-layout-ms', String(Math.round(t1 - t0)));
    root.setAttribute('data-render-ms', String(Math.round(t2 - t0)));
  }

  function draw(g, view, lay) {
    viewport.textContent = '';
    var gEdges = el('g', { 'class': 'gx-edges' }, viewport);
    var gLabels = el('g', { 'class': 'gx-elabels' }, viewport);
    var gNodes = el('g', { 'class': 'gx-nodes' }, viewport);
    var focused = state.focus >= 0;
    var edgeEls = new Map();
    // Labels say which property feeds which input: on the focus's own edges,
    // on every highlighted one when they are few enough not to pile up.
    var labelAll = focused && view.hl.size <= 16, placedLabels = [], candidates = [];
    lay.paths.forEach(function (p) {
      var e = p.e;
      var cls = 'gx-edge ' + e.kind + ' ' + e.origin + (e.suspended || e.candidate ? ' suspended' : '') + (exercised(e) ? ' ex' : '');
      if (focused) cls += view.hl.has(e.i) ? ' hl' : ' dim';
      var directed = e.kind === 'produces' || e.kind === 'consumes';
      var g1 = el('g', { 'data-e': String(e.i) }, gEdges);
      var path = el('path', {
        'class': cls, d: p.d,
        'marker-end': directed ? 'url(#gx-arrow-' + (exercised(e) ? 'ex' : e.kind) + ')' : null
      }, g1);
      el('path', { 'class': 'gx-hit', d: p.d }, g1);
      el('title', null, g1, edgeTitle(g, e));
      edgeEls.set(e.i, path);
      var own = e.s === state.focus || e.t === state.focus;
      if (focused && e.label && (own || (labelAll && view.hl.has(e.i)))) candidates.push({ p: p, own: own });
    });
    // The focus's own edges first. Where edges converge their middles are
    // close: a label that would cover one already placed is left to the
    // tooltip and the panel.
    candidates.sort(function (a, b) { return b.own - a.own; });
    candidates.forEach(function (c) {
      var p = c.p, label = p.e.label;
      var text = label.length > 48 ? label.slice(0, 47) + '…' : label;
      var w = textWidth(text, SUB_FONT) + 4, box = [p.mid[0] - w / 2, p.mid[1] - 15, p.mid[0] + w / 2, p.mid[1] - 1];
      var clear = placedLabels.every(function (b) {
        return box[2] < b[0] || box[0] > b[2] || box[3] < b[1] || box[1] > b[3];
      });
      if (clear) {
        placedLabels.push(box);
        el('text', { 'class': 'gx-elabel', x: f1(p.mid[0]), y: f1(p.mid[1] - 4), 'text-anchor': 'middle' }, gLabels, text);
      }
    });
    var orphans = view.info ? view.info.orphans : new Set();
    lay.nodes.forEach(function (ln) {
      var n = g.nodes[ln.i], b = ln.box, w = b.w, hgt = b.h;
      var r = view.role.get(ln.i);
      var cls = 'gx-node ' + (n.op ? 'op' : 'schema') + (r && r !== 'plain' && r !== 'link' ? ' ' + r : '') +
        (orphans.has(ln.i) ? ' orphan' : '');
      var gn = el('g', {
        'class': cls, transform: 'translate(' + f1(ln.x - w / 2) + ',' + f1(ln.y - hgt / 2) + ')',
        'data-i': String(ln.i), tabindex: '0', role: 'button', 'aria-label': (n.op ? 'operation ' : 'schema ') + n.name
      }, gNodes);
      if (n.op) {
        el('rect', { 'class': 'ring', x: -3, y: -3, width: w + 6, height: hgt + 6, rx: 8 }, gn);
        el('rect', { 'class': 'shape', width: w, height: hgt, rx: 6 }, gn);
        el('path', {
          d: 'M6,0 H9 V' + hgt + ' H6 A6,6 0 0 1 0,' + (hgt - 6) + ' V6 A6,6 0 0 1 6,0 z',
          fill: METHOD_COLOURS[n.method] || '#6e7781'
        }, gn);
        el('text', { x: 16, y: b.sub ? 16 : 18.5 }, gn, b.label + (n.deprecated ? ' (deprecated)' : ''));
        if (b.sub) el('text', { 'class': 'sub', x: 16, y: 31 }, gn, b.sub);
      } else {
        var pts = function (d) {
          return [[10 - d, -d], [w - 10 + d, -d], [w + d, hgt / 2], [w - 10 + d, hgt + d], [10 - d, hgt + d], [-d, hgt / 2]]
            .map(function (p) { return f1(p[0]) + ',' + f1(p[1]); }).join(' ');
        };
        el('polygon', { 'class': 'ring', points: pts(3) }, gn);
        el('polygon', { 'class': 'shape', points: pts(0) }, gn);
        el('text', { x: w / 2, y: 18.5, 'text-anchor': 'middle' }, gn, b.label);
      }
      el('title', null, gn, nodeTitle(n));
    });
    state.drawn = { edgeEls: edgeEls, g: g };
  }

  function nodeTitle(n) {
    var s = (n.op ? 'operation ' : 'schema ') + n.name;
    if (n.op) s += '\n' + n.method + ' ' + n.path;
    var produces = 0, consumes = 0;
    n.outs.concat(n.ins).forEach(function (e) {
      if (e.kind === 'produces') produces++;
      if (e.kind === 'consumes') consumes++;
    });
    return s + '\n' + produces + ' produces, ' + consumes + ' consumes edge(s); click to focus';
  }

  function edgeTitle(g, e) {
    var s = KIND_LABELS[e.kind] + ': ' + g.nodes[e.s].name + ' → ' + g.nodes[e.t].name;
    if (e.label) s += '\n' + e.label;
    s += '\n' + e.origin + ', score ' + e.score + (e.suspended ? ', suspended' : e.candidate ? ', candidate' : '');
    if (e.cov) s += '\n' + (e.cov.exercised ? 'exercised: ' : 'not exercised: ') + e.cov.flows + ' flows, ' + e.cov.successes + ' answered 2xx';
    e.evidence.forEach(function (ev) { s += '\nevidence: ' + ev; });
    return s;
  }

  // ---------------------------------------------------------------- panel

  function nodeButton(n, parent) {
    return h('a', { href: '#graph=' + encodeURIComponent(n.id), 'class': 'gx-link', 'data-i': String(n.i), title: n.name }, parent, shortName(n.name, n.op));
  }

  function listNodes(parent, title, nodes, drawn) {
    h('h4', null, parent, title + ' (' + nodes.length + ')');
    if (!nodes.length) { h('p', { 'class': 'muted' }, parent, 'none'); return; }
    var ul = h('ul', null, parent);
    nodes.slice(0, LIMITS.list).forEach(function (n) {
      var li = h('li', null, ul);
      nodeButton(n, li);
      if (drawn && !drawn.has(n.i)) h('span', { 'class': 'muted' }, li, ' (not drawn)');
    });
    if (nodes.length > LIMITS.list) h('li', { 'class': 'muted' }, ul, (nodes.length - LIMITS.list) + ' more');
  }

  function panel(g, view) {
    side.textContent = '';
    if (!view.info) {
      h('h3', null, side, g.title);
      h('p', { 'class': 'muted' }, side, g.format + ': ' + g.ops + ' operations, ' + (g.nodes.length - g.ops) + ' schemas, ' + g.edges.length + ' edges');
      var byKind = {};
      g.edges.forEach(function (e) { byKind[e.kind] = (byKind[e.kind] || 0) + 1; });
      var ul = h('ul', null, side);
      KINDS.forEach(function (k) { if (byKind[k]) h('li', null, ul, byKind[k] + ' ' + KIND_LABELS[k]); });
      var cov = g.edges.filter(function (e) { return e.cov; });
      if (cov.length) {
        var ex = cov.filter(exercised).length;
        h('p', null, side, 'Links exercised here: ' + ex + ' of ' + g.edges.filter(function (e) { return e.kind === 'consumes'; }).length + ' consumes links.');
      }
      var deg = g.nodes.map(function (n) { return { n: n, d: n.ins.length + n.outs.length }; })
        .sort(function (a, b) { return b.d - a.d; }).slice(0, 15).filter(function (x) { return x.d > 0; });
      h('h4', null, side, 'Most connected');
      var ul2 = h('ul', null, side);
      deg.forEach(function (x) {
        var li = h('li', null, ul2);
        nodeButton(x.n, li);
        h('span', { 'class': 'muted' }, li, ' ' + x.d);
      });
      var orphans = g.nodes.filter(function (n) {
        return !n.op && n.outs.some(function (e) { return e.kind === 'consumes'; }) &&
          !n.ins.some(function (e) { return e.kind === 'produces'; });
      });
      if (orphans.length) listNodes(side, 'Consumed, produced by no operation', orphans, null);
      return;
    }
    var info = view.info, F = info.focus;
    h('button', { type: 'button', 'class': 'gx-back' }, side, '← Overview').addEventListener('click', function () { setFocus(-1); });
    h('div', { 'class': 'muted' }, side, F.op ? 'operation' : 'schema');
    h('h3', null, side, F.name);
    if (F.op) h('div', { 'class': 'mono' }, side, F.method + ' ' + F.path + (F.deprecated ? ' (deprecated)' : ''));
    if (F.op) {
      h('h4', null, side, 'Inputs fed by (' + info.inputs.length + ')');
      if (!info.inputs.length) h('p', { 'class': 'muted' }, side, 'no consumes edge: needs nothing created first');
      else {
        var ul3 = h('ul', null, side);
        info.inputs.forEach(function (e) {
          var li = h('li', null, ul3);
          nodeButton(g.nodes[e.s], li);
          h('div', { 'class': 'mono muted' }, li, e.label + ' · ' + e.origin + ' ' + e.score +
            (e.suspended ? ' · suspended' : e.candidate ? ' · candidate' : '') +
            (e.cov ? ' · ' + (e.cov.exercised ? 'exercised' : 'not exercised') + ', ' + e.cov.flows + ' flows, ' + e.cov.successes + ' 2xx' : ''));
        });
      }
    }
    listNodes(side, F.op ? 'Producers of its inputs' : 'Producers', info.producers, view.role);
    listNodes(side, F.op ? 'Consumers of what it produces' : 'Consumers', info.consumers, view.role);
    h('h4', null, side, 'Chain: what must exist before it');
    if (!info.chain.length || !info.chain.some(function (l) { return l.steps.length; })) {
      h('p', { 'class': 'muted' }, side, 'nothing');
    } else {
      var ol = h('ol', null, side);
      info.chain.forEach(function (level) {
        level.steps.forEach(function (st) {
          var li = h('li', null, ol);
          nodeButton(st.schema, li);
          li.appendChild(document.createTextNode(st.consumer !== F && st.schema !== F ? ' (for ' + st.consumer.name + ') ← ' : ' ← '));
          if (!st.producers.length && !st.more) h('span', { 'class': 'muted' }, li, 'no producer');
          st.producers.forEach(function (p, k) {
            if (k) li.appendChild(document.createTextNode(', '));
            nodeButton(p, li);
          });
          if (st.more) h('span', { 'class': 'muted' }, li, ' +' + st.more + ' more');
        });
      });
      if (info.depthCut) h('p', { 'class': 'muted' }, side, 'Cut at ' + LIMITS.chainDepth + ' operations back.');
    }
    if (info.linked.length) {
      h('h4', null, side, 'Linked (' + info.linked.length + ')');
      var ul4 = h('ul', null, side);
      info.linked.forEach(function (l) {
        var li = h('li', null, ul4);
        nodeButton(l.node, li);
        h('span', { 'class': 'muted' }, li, ' ' + KIND_LABELS[l.edge.kind] + (l.edge.label ? ': ' + l.edge.label : '') +
          (view.role.has(l.node.i) ? '' : ' (not drawn)'));
      });
    }
  }

  side.addEventListener('click', function (ev) {
    var b = ev.target.closest && ev.target.closest('.gx-link');
    if (b && !ev.ctrlKey && !ev.metaKey && !ev.shiftKey) {
      ev.preventDefault();
      setFocus(Number(b.getAttribute('data-i')));
    }
  });

  // ---------------------------------------------------------------- view

  function applyView() {
    var v = state.view;
    viewport.setAttribute('transform', 'translate(' + f1(v.x) + ',' + f1(v.y) + ') scale(' + Math.round(v.k * 1000) / 1000 + ')');
  }

  function size() {
    var r = svg.getBoundingClientRect();
    return { w: r.width || 800, h: r.height || 600 };
  }

  // Fits the drawing, but never so small that the labels cannot be read
  // (k < MIN_K): then, along each axis the drawing does not fit, the view
  // centres on the focus (or starts at the drawing's top left).
  var MIN_K = 0.5;
  function initialView(lay) {
    var s = size(), pad = 20;
    var k = Math.min((s.w - 2 * pad) / Math.max(lay.width, 1), (s.h - 2 * pad) / Math.max(lay.height, 1), 1.25);
    k = Math.max(k, MIN_K);
    var target = lay.nodes.filter(function (n) { return n.i === state.focus; })[0];
    function axis(extent, room, at) {
      if (extent * k <= room - 2 * pad) return (room - extent * k) / 2;
      if (at === undefined) return pad;
      // Centred on the focus, without leaving blank room past either end.
      var x = room / 2 - at * k;
      return Math.min(pad, Math.max(x, room - pad - extent * k));
    }
    state.view = {
      k: k,
      x: axis(lay.width, s.w, target && target.x),
      y: axis(lay.height, s.h, target ? target.y : undefined)
    };
    applyView();
  }

  function fit() {
    if (!state.bounds) return;
    var s = size(), pad = 20, b = state.bounds;
    var k = Math.min((s.w - 2 * pad) / Math.max(b.w, 1), (s.h - 2 * pad) / Math.max(b.h, 1), 2);
    state.view = { k: k, x: (s.w - b.w * k) / 2, y: (s.h - b.h * k) / 2 };
    applyView();
  }

  function zoomAt(factor, px, py) {
    var v = state.view;
    var k = Math.max(0.05, Math.min(4, v.k * factor));
    var f = k / v.k;
    state.view = { k: k, x: px - (px - v.x) * f, y: py - (py - v.y) * f };
    applyView();
  }

  function zoomCentre(factor) {
    var s = size();
    zoomAt(factor, s.w / 2, s.h / 2);
  }

  svg.addEventListener('wheel', function (ev) {
    ev.preventDefault();
    var r = svg.getBoundingClientRect();
    var dy = ev.deltaMode === 1 ? ev.deltaY * 16 : ev.deltaY;
    zoomAt(Math.exp(-dy * 0.0015), ev.clientX - r.left, ev.clientY - r.top);
  }, { passive: false });

  var drag = null;
  svg.addEventListener('pointerdown', function (ev) {
    if (ev.button !== 0) return;
    var node = ev.target.closest && ev.target.closest('.gx-node');
    drag = { x: ev.clientX, y: ev.clientY, vx: state.view.x, vy: state.view.y, moved: false, node: node, id: ev.pointerId };
  });
  svg.addEventListener('pointermove', function (ev) {
    if (!drag || ev.pointerId !== drag.id) return;
    var dx = ev.clientX - drag.x, dy = ev.clientY - drag.y;
    if (!drag.moved && Math.abs(dx) + Math.abs(dy) > 4) {
      drag.moved = true;
      svg.classList.add('dragging');
      try { svg.setPointerCapture(drag.id); } catch (e) { /* the pointer is gone */ }
    }
    if (drag.moved) {
      state.view.x = drag.vx + dx;
      state.view.y = drag.vy + dy;
      applyView();
    }
  });
  function endDrag(ev) {
    if (!drag || ev.pointerId !== drag.id) return;
    var d = drag;
    drag = null;
    svg.classList.remove('dragging');
    if (!d.moved && d.node && ev.type === 'pointerup') setFocus(Number(d.node.getAttribute('data-i')));
  }
  svg.addEventListener('pointerup', endDrag);
  svg.addEventListener('pointercancel', endDrag);

  // Hovering a node lights its edges.
  var hot = [];
  svg.addEventListener('pointerover', function (ev) {
    var node = ev.target.closest && ev.target.closest('.gx-node');
    hot.forEach(function (e) { e.classList.remove('hot'); });
    hot = [];
    if (!node || !state.drawn) return;
    var n = state.drawn.g.nodes[Number(node.getAttribute('data-i'))];
    n.ins.concat(n.outs).forEach(function (e) {
      var p = state.drawn.edgeEls.get(e.i);
      if (p) { p.classList.add('hot'); hot.push(p); }
    });
  });

  svg.addEventListener('keydown', function (ev) {
    var node = ev.target.closest && ev.target.closest('.gx-node');
    if (node && (ev.key === 'Enter' || ev.key === ' ')) {
      ev.preventDefault();
      setFocus(Number(node.getAttribute('data-i')));
    } else if (ev.key === '+' || ev.key === '=') zoomCentre(1.25);
    else if (ev.key === '-') zoomCentre(0.8);
    else if (ev.key === '0') fit();
  });

  zoomIn.addEventListener('click', function () { zoomCentre(1.25); });
  zoomOut.addEventListener('click', function () { zoomCentre(0.8); });
  fitBtn.addEventListener('click', fit);
  overviewBtn.addEventListener('click', function () { setFocus(-1); });
  fullBtn.addEventListener('click', function () {
    var full = root.classList.toggle('gx-full');
    fullBtn.textContent = full ? 'Close' : 'Expand';
    fit();
  });
  if (select) {
    select.addEventListener('change', function () {
      state.g = Number(select.value);
      state.focus = -1;
      search.value = '';
      render(true);
    });
  }
  document.addEventListener('keydown', function (ev) {
    var typing = /^(INPUT|SELECT|TEXTAREA)$/.test(ev.target.tagName);
    if (ev.key === '/' && !typing) {
      var r = root.getBoundingClientRect();
      if (r.bottom > 0 && r.top < window.innerHeight) { ev.preventDefault(); search.focus(); }
    } else if (ev.key === 'Escape' && !typing) {
      if (root.classList.contains('gx-full')) fullBtn.click();
      else if (state.focus >= 0) setFocus(-1);
    }
  });

  function setFocus(i) {
    state.focus = i;
    if (i >= 0) search.value = G().nodes[i].name;
    render(true);
  }

  // ---------------------------------------------------------------- search

  var matches = [], active = -1;
  function findMatches(q) {
    q = q.trim().toLowerCase();
    if (!q) return [];
    var out = [];
    G().nodes.forEach(function (n) {
      var at = n.key.indexOf(q);
      if (at < 0) return;
      var nameAt = n.name.toLowerCase().indexOf(q);
      // Exact names, then name prefixes, then names containing it, then paths.
      var rank = n.name.toLowerCase() === q ? 0 : nameAt === 0 ? 1 : nameAt > 0 ? 2 : 3;
      out.push({ n: n, rank: rank });
    });
    out.sort(function (a, b) { return a.rank - b.rank || a.n.name.length - b.n.name.length || (a.n.name < b.n.name ? -1 : 1); });
    return out.slice(0, LIMITS.suggestions).map(function (m) { return m.n; });
  }
  function showSuggestions() {
    matches = findMatches(search.value);
    active = matches.length ? 0 : -1;
    sugg.textContent = '';
    matches.forEach(function (n, k) {
      var li = h('li', { role: 'option', id: 'gx-opt-' + k, 'aria-selected': k === active ? 'true' : 'false', 'data-i': String(n.i) }, sugg);
      h('span', { 'class': 'k' }, li, n.op ? '▭' : '⬡');
      li.appendChild(document.createTextNode(n.name));
      if (n.op) h('span', { 'class': 'p' }, li, n.method + ' ' + n.path);
    });
    if (search.value.trim() && !matches.length) h('li', { 'class': 'muted', 'aria-disabled': 'true' }, sugg, 'no operation or schema matches');
    var open = sugg.childNodes.length > 0;
    if (open) sugg.removeAttribute('hidden'); else sugg.setAttribute('hidden', '');
    search.setAttribute('aria-expanded', open ? 'true' : 'false');
    search.setAttribute('aria-activedescendant', active >= 0 ? 'gx-opt-' + active : '');
  }
  function moveActive(d) {
    if (!matches.length) return;
    active = (active + d + matches.length) % matches.length;
    Array.prototype.forEach.call(sugg.children, function (li, k) { li.setAttribute('aria-selected', k === active ? 'true' : 'false'); });
    search.setAttribute('aria-activedescendant', 'gx-opt-' + active);
    var li = sugg.children[active];
    if (li && li.scrollIntoView) li.scrollIntoView({ block: 'nearest' });
  }
  function closeSuggestions() {
    sugg.setAttribute('hidden', '');
    search.setAttribute('aria-expanded', 'false');
  }
  function choose(n) {
    closeSuggestions();
    setFocus(n.i);
  }
  search.addEventListener('input', showSuggestions);
  search.addEventListener('focus', function () { if (search.value) showSuggestions(); });
  search.addEventListener('keydown', function (ev) {
    if (ev.key === 'ArrowDown') { ev.preventDefault(); if (sugg.hasAttribute('hidden')) showSuggestions(); else moveActive(1); }
    else if (ev.key === 'ArrowUp') { ev.preventDefault(); moveActive(-1); }
    else if (ev.key === 'Enter') {
      ev.preventDefault();
      if (sugg.hasAttribute('hidden')) showSuggestions();
      if (active >= 0 && matches[active]) choose(matches[active]);
    } else if (ev.key === 'Escape') {
      ev.stopPropagation();
      if (!sugg.hasAttribute('hidden')) closeSuggestions();
      else { search.value = ''; setFocus(-1); }
    }
  });
  search.addEventListener('blur', function () { setTimeout(closeSuggestions, 150); });
  sugg.addEventListener('mousedown', function (ev) {
    var li = ev.target.closest && ev.target.closest('li[data-i]');
    if (li) { ev.preventDefault(); choose(G().nodes[Number(li.getAttribute('data-i'))]); }
  });

  // Links into the explorer: report.html#graph=op:getBook opens on a node,
  // #explore (or #explore=NODE) opens it over the whole window.
  function fromHash() {
    var m = /^#(graph|explore)(?:=(.+))?$/.exec(location.hash);
    if (!m) return null;
    if (m[1] === 'explore' && !root.classList.contains('gx-full')) {
      root.classList.add('gx-full');
      fullBtn.textContent = 'Close';
    }
    if (!m[2]) return m[1];
    var id = decodeURIComponent(m[2]);
    for (var gi = 0; gi < graphs.length; gi++) {
      var found = graphs[gi].nodes.filter(function (n) { return n.id === id || n.name === id; })[0];
      if (found) {
        state.g = gi;
        if (select) select.value = String(gi);
        state.focus = found.i;
        search.value = found.name;
        break;
      }
    }
    return m[1];
  }
  var opened = fromHash();
  try {
    render(true);
  } catch (err) {
    // A bug here must not leave a half-drawn box that looks like a graph.
    fail('The graph explorer failed (' + err.message + '); graph-final.json holds the graph.');
    return;
  }
  if (opened === 'graph' && location.hash !== '#graph' && root.scrollIntoView) root.scrollIntoView();
  window.addEventListener('hashchange', function () {
    var how = fromHash();
    if (how) { render(true); if (how === 'graph') root.scrollIntoView(); }
  });
})();
