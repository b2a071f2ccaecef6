// GrooveSeek's search page: the few things plain HTML cannot do (docs/ui.md).
// "/" focuses the search box, j/k move between hits, and the connection graph pans and zooms
// (drag, wheel, arrow keys, + - 0, the buttons). No inline handlers: the page's CSP forbids them.
"use strict";

function typing(target) {
  return target instanceof HTMLElement && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName));
}

function moveBetweenHits(step) {
  const links = Array.from(document.querySelectorAll("ol.hits a.open"));
  if (!links.length) return;
  const at = links.indexOf(document.activeElement);
  const next = at < 0 ? (step > 0 ? 0 : links.length - 1) : Math.min(links.length - 1, Math.max(0, at + step));
  links[next].focus();
}

document.addEventListener("keydown", (event) => {
  if (event.ctrlKey || event.metaKey || event.altKey || typing(event.target)) return;
  const box = document.getElementById("q");
  if (event.key === "/" && box) {
    event.preventDefault();
    box.focus();
    box.select();
  } else if (event.key === "j" || event.key === "k") {
    moveBetweenHits(event.key === "j" ? 1 : -1);
  }
});

function explorable(view) {
  const svg = view.querySelector("svg.graph");
  if (!svg) return;
  const original = svg.getAttribute("viewBox");
  const home = original.split(/\s+/).map(Number);
  let box = home.slice();
  const show = () => svg.setAttribute("viewBox", box.map((n) => n.toFixed(1)).join(" "));

  function zoom(factor, cx, cy) {
    // factor < 1 zooms in; (cx, cy) is the point that stays put, in picture units
    const [x, y, w, h] = box;
    const nw = Math.min(home[2] * 4, Math.max(home[2] / 12, w * factor));
    const f = nw / w;
    box = [cx - (cx - x) * f, cy - (cy - y) * f, w * f, h * f];
    show();
  }

  function centre() {
    return [box[0] + box[2] / 2, box[1] + box[3] / 2];
  }

  function pan(dx, dy) {
    box = [box[0] + dx, box[1] + dy, box[2], box[3]];
    show();
  }

  function toPicture(clientX, clientY) {
    const point = new DOMPoint(clientX, clientY).matrixTransform(svg.getScreenCTM().inverse());
    return [point.x, point.y];
  }

  const actions = {
    "zoom-in": () => zoom(0.8, ...centre()),
    "zoom-out": () => zoom(1.25, ...centre()),
    "zoom-reset": () => { box = home.slice(); svg.setAttribute("viewBox", original); },
  };
  view.querySelectorAll("button[data-action]").forEach((button) => {
    button.addEventListener("click", () => actions[button.dataset.action]());
  });

  view.addEventListener("wheel", (event) => {
    event.preventDefault();
    zoom(event.deltaY < 0 ? 0.85 : 1 / 0.85, ...toPicture(event.clientX, event.clientY));
  }, { passive: false });

  let drag = null;
  let moved = false;
  view.addEventListener("pointerdown", (event) => {
    if (event.button !== 0 || event.target.closest("button")) return;
    drag = { x: event.clientX, y: event.clientY, box: box.slice() };
    moved = false;
  });
  view.addEventListener("pointermove", (event) => {
    if (!drag) return;
    const scale = box[2] / svg.getBoundingClientRect().width;
    const dx = event.clientX - drag.x;
    const dy = event.clientY - drag.y;
    if (!moved && Math.hypot(dx, dy) < 4) return;
    if (!moved) { view.setPointerCapture(event.pointerId); view.classList.add("dragging"); }
    moved = true;
    box = [drag.box[0] - dx * scale, drag.box[1] - dy * scale, box[2], box[3]];
    show();
  });
  const stop = () => { drag = null; view.classList.remove("dragging"); };
  view.addEventListener("pointerup", stop);
  view.addEventListener("pointercancel", stop);
  // A drag that ends on a document box must not open it.
  view.addEventListener("click", (event) => { if (moved) { event.preventDefault(); moved = false; } }, true);

  view.addEventListener("keydown", (event) => {
    const step = box[2] / 10;
    const keys = {
      ArrowLeft: () => pan(-step, 0), ArrowRight: () => pan(step, 0),
      ArrowUp: () => pan(0, -step), ArrowDown: () => pan(0, step),
      "+": actions["zoom-in"], "=": actions["zoom-in"], "-": actions["zoom-out"], "0": actions["zoom-reset"],
    };
    if (keys[event.key] && !typing(event.target)) {
      event.preventDefault();
      keys[event.key]();
    }
  });
}

document.querySelectorAll(".graph-view").forEach(explorable);
