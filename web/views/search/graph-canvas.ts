/**
 * Draws an index's graph with sigma (WebGL) from the server's columns: positions come laid out, so the
 * browser builds a graphology graph and draws, nothing more. Colours are the stylesheet's (`--graph-*`,
 * `--fg`, `--bg-raised` read from the container), so the canvas follows the light and dark themes; a
 * theme change redraws with the new ones. Loaded as its own chunk, only when the graph is shown.
 */
import Graph from "graphology";
import Sigma, { DEFAULT_STYLES } from "sigma";
import { DEFAULT_EDGE_PRIMITIVES, DEFAULT_NODE_PRIMITIVES } from "sigma/primitives";
import { pathLine } from "sigma/rendering";
import { currentTheme } from "../../lib/theme.ts";

/** The graph route's answer (schemas/search.ts IndexGraph). */
export interface GraphColumns {
  index: string;
  entities: number;
  relationships: number;
  note?: string;
  nodes: {
    id: number[];
    name: string[];
    type: string[];
    degree: number[];
    community: number[];
    x: number[];
    y: number[];
  };
  edges: { source: number[]; target: number[]; weight: number[] };
}

export interface DrawnGraph {
  /** Marks one entity (by position) and moves the camera to it; undefined clears the mark. */
  select(position: number | undefined): Promise<void>;
  destroy(): void;
}

const PALETTE_SIZE = 8;
/**
 * Edges drawn with the first picture: sigma takes edges in about ten times slower than nodes, all in one
 * task, so the heaviest few thousand come first and the rest follow in batches after the first frame.
 */
export const FIRST_EDGES = 3000;
/** Edges added per later batch: each batch makes sigma reprocess every edge it holds, in one task. */
const EDGE_BATCH = 3000;
/**
 * The most edges drawn: beyond it each batch's reprocessing would freeze the page for a second or more
 * in software WebGL (headless Chromium under load), and a hairball of more edges shows nothing new.
 */
export const DRAWN_EDGES = 12_000;

/** Node radius in layout units: the same the server packed the circles with. */
function nodeSize(degree: number): number {
  return 2 + Math.sqrt(degree) * 1.5;
}

function colours(container: HTMLElement) {
  const style = getComputedStyle(container);
  const read = (name: string, fallback: string) => style.getPropertyValue(name).trim() || fallback;
  return {
    palette: Array.from({ length: PALETTE_SIZE }, (_, i) => read(`--graph-${i + 1}`, "#888")),
    none: read("--graph-none", "#999"),
    edge: read("--graph-edge", "#ccc"),
    label: read("--fg", "#000"),
    backdrop: read("--bg-raised", "#fff"),
    // The foreground colour stands apart from every community colour in both themes.
    selected: read("--fg", "#000"),
  };
}

/**
 * Draws `data` into `container`; `onClick` hears the position of a clicked entity (or undefined for the
 * background), `onPainted` the first frame drawn.
 */
export function drawGraph(
  container: HTMLElement,
  data: GraphColumns,
  events: {
    onClick: (position: number | undefined) => void;
    onPainted: () => void;
    /** Every edge that will be drawn is drawn (the later batches too). */
    onComplete?: () => void;
  },
): DrawnGraph {
  // The server sends each pair once: a simple graph with keys given spares graphology making up 30,000.
  const graph = new Graph({ type: "undirected", multi: false, allowSelfLoops: false });
  const { nodes, edges } = data;
  for (let i = 0; i < nodes.id.length; i++)
    graph.addNode(String(i), {
      x: nodes.x[i],
      y: nodes.y[i],
      size: nodeSize(nodes.degree[i] ?? 0),
      label: nodes.name[i],
      community: nodes.community[i],
    });
  // Edges cost sigma far more than nodes (about 0.2 ms each in software WebGL, all in one task): the
  // server sends them heaviest first, the first FIRST_EDGES go with the first picture and the rest, up to
  // DRAWN_EDGES (the panel says when there are more), follow in batches.
  const total = Math.min(edges.source.length, DRAWN_EDGES);
  let added = 0;
  const addEdges = (upTo: number) => {
    for (; added < Math.min(upTo, total); added++) {
      const [s, t] = [String(edges.source[added]), String(edges.target[added])];
      if (s === t || graph.hasEdge(s, t)) continue;
      graph.addEdgeWithKey(added, s, t, {
        size: Math.min(4, 0.5 + Math.log1p(edges.weight[added] ?? 1) / 2),
      });
    }
  };
  addEdges(FIRST_EDGES);
  let batchTimer: ReturnType<typeof setTimeout> | undefined;
  // One batch per turn of the event loop once sigma has drawn the last: input and frames go between.
  const nextBatch = () => {
    batchTimer = undefined;
    if (!renderer) return;
    if (added >= total) {
      events.onComplete?.();
      return;
    }
    addEdges(added + EDGE_BATCH);
    requestAnimationFrame(() => {
      batchTimer = setTimeout(nextBatch, 0);
    });
  };

  let renderer: Sigma | undefined;
  let selected: string | undefined;
  let painted = false;

  const create = () => {
    const c = colours(container);
    const camera = renderer?.getCamera().getState();
    renderer?.kill();
    graph.forEachNode((key, a) => {
      const community = a.community as number;
      graph.setNodeAttribute(key, "color", community < 0 ? c.none : c.palette[community % PALETTE_SIZE]);
    });
    type State = { isHovered: boolean; isHighlighted: boolean };
    const marked = (s: State) => s.isHovered || s.isHighlighted;
    renderer = new Sigma(graph, container, {
      // Straight lines only. Sigma's default edge paths include the self-loop, and one edge program
      // serves every path, so each edge was drawn with the loop's 66 vertices instead of a line's 6 (ten
      // times the work per frame, in software WebGL a second per frame at 10,000 entities). The graph
      // allows no self-loops.
      primitives: {
        nodes: DEFAULT_NODE_PRIMITIVES,
        edges: { ...DEFAULT_EDGE_PRIMITIVES, paths: [pathLine()] },
      },
      settings: {
        itemSizesReference: "positions",
        hideEdgesOnMove: nodes.id.length > 2000,
        labelRenderedSizeThreshold: 6,
        zoomToSizeRatioFunction: (ratio) => ratio,
      },
      styles: {
        nodes: {
          ...DEFAULT_STYLES.nodes,
          color: (a, s: State) => (s.isHighlighted ? c.selected : ((a.color as string) ?? c.none)),
          labelColor: c.label,
          labelVisibility: (_a, s: State) => (marked(s) ? "visible" : "auto"),
          backdropVisibility: (_a, s: State) => (marked(s) ? "visible" : "hidden"),
          backdropColor: c.backdrop,
        },
        edges: { ...DEFAULT_STYLES.edges, color: c.edge },
      },
    });
    if (camera) renderer.getCamera().setState(camera);
    if (selected !== undefined) renderer.setNodeState(selected, { isHighlighted: true });
    renderer.on("clickNode", ({ node }) => events.onClick(Number(node)));
    renderer.on("clickStage", () => events.onClick(undefined));
    // Sigma draws in its constructor or on the next frame: two frames on, the first picture is on screen.
    if (!painted)
      requestAnimationFrame(() =>
        requestAnimationFrame(() => {
          painted = true;
          events.onPainted();
          batchTimer = setTimeout(nextBatch, 0);
        }),
      );
  };
  create();

  // Both ways a theme changes: the toggle (data-theme on <html>) and the system's scheme.
  let theme = currentTheme();
  const retheme = () => {
    if (currentTheme() === theme) return;
    theme = currentTheme();
    create();
  };
  const observer = new MutationObserver(retheme);
  observer.observe(document.documentElement, { attributes: true, attributeFilter: ["data-theme"] });
  const scheme = window.matchMedia?.("(prefers-color-scheme: dark)");
  scheme?.addEventListener("change", retheme);

  return {
    async select(position) {
      if (!renderer) return;
      if (selected !== undefined && graph.hasNode(selected))
        renderer.setNodeState(selected, { isHighlighted: false });
      selected = position === undefined ? undefined : String(position);
      if (selected === undefined || !graph.hasNode(selected)) return;
      renderer.setNodeState(selected, { isHighlighted: true });
      const at = renderer.getNodeDisplayData(selected);
      // Centre it; in a large graph zoom in far enough to tell it from its neighbours.
      const camera = renderer.getCamera();
      const ratio = Math.min(camera.ratio, nodes.id.length > 200 ? 0.1 : 1);
      if (at) await camera.animate({ x: at.x, y: at.y, ratio }, { duration: 300 });
    },
    destroy() {
      observer.disconnect();
      if (batchTimer !== undefined) clearTimeout(batchTimer);
      scheme?.removeEventListener("change", retheme);
      renderer?.kill();
      renderer = undefined;
    },
  };
}
