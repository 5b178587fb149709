#include "server/web/style.h"

namespace boardlab::server::web {

const char kStyleSheet[] = R"css(:root {
  --fg: #1b2330; --muted: #5a6372; --line: #d8dde5; --bg: #f5f6f8; --card: #ffffff;
  --accent: #0a58a8; --bar: #15263a;
}
* { box-sizing: border-box; }
body {
  margin: 0; color: var(--fg); background: var(--bg);
  font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif;
}
a { color: var(--accent); }
code, pre { font-family: ui-monospace, "DejaVu Sans Mono", monospace; }
header.top {
  display: flex; flex-wrap: wrap; align-items: center; gap: .4rem 1.2rem;
  padding: .6rem 1rem; background: var(--bar); color: #fff;
}
header.top a { color: #fff; text-decoration: none; }
header.top .brand { font-weight: 700; letter-spacing: .02em; }
header.top nav { display: flex; gap: 1rem; }
header.top .viewer { margin-left: auto; display: flex; align-items: center; gap: .75rem; font-size: .9rem; }
header.top form { margin: 0; }
main { max-width: 1280px; margin: 0 auto; padding: 1rem; }
h1 { font-size: 1.35rem; margin: .3rem 0 .8rem; overflow-wrap: anywhere; }
h2 { font-size: 1.1rem; margin: 1.6rem 0 .6rem; }
p { margin: .4rem 0; }
.muted { color: var(--muted); }
.error { color: #9b1c1c; font-weight: 600; overflow-wrap: anywhere; }
table { border-collapse: collapse; width: 100%; background: var(--card); border: 1px solid var(--line); }
th, td { text-align: left; padding: .45rem .6rem; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-size: .8rem; text-transform: uppercase; letter-spacing: .03em; color: var(--muted); background: #eef1f5; }
td { overflow-wrap: break-word; }
td.long { overflow-wrap: anywhere; }
.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.badge {
  display: inline-block; padding: .05rem .5rem; border-radius: .7rem; font-size: .78rem;
  font-weight: 600; background: #e6e9ee; color: #2b3442; white-space: nowrap;
}
.badge.pass, .badge.idle, .badge.ok, .badge.npu { background: #d5f0dc; color: #13502a; }
.badge.fail, .badge.compile_error, .badge.run_error, .badge.infra_error, .badge.invalid_request,
.badge.quarantined, .badge.offline { background: #fbdede; color: #7c1a1a; }
.badge.queue_timeout, .badge.cancelled, .badge.maintenance, .badge.reserved, .badge.recovering,
.badge.cpu, .badge.unverified, .badge.no_output { background: #fcefc7; color: #6b4a05; }
.badge.compiling, .badge.queued, .badge.assigned, .badge.loading, .badge.running,
.badge.collecting, .badge.busy { background: #dbe8fb; color: #173d7a; }
form.filters { display: flex; flex-wrap: wrap; gap: .5rem .8rem; align-items: flex-end; margin: 0 0 1rem; }
form.filters label { display: flex; flex-direction: column; gap: .15rem; font-size: .8rem; color: var(--muted); }
input, select { font: inherit; padding: .35rem .45rem; border: 1px solid #b9c1cc; border-radius: 4px; background: #fff; min-width: 9rem; }
button {
  font: inherit; padding: .4rem 1rem; border-radius: 4px; border: 1px solid var(--accent);
  background: var(--accent); color: #fff; cursor: pointer;
}
button.quiet { background: transparent; border-color: #8596ab; padding: .2rem .7rem; font-size: .85rem; }
dl.facts {
  display: grid; grid-template-columns: max-content 1fr; gap: .3rem 1.2rem; margin: 0;
  padding: .8rem 1rem; background: var(--card); border: 1px solid var(--line);
}
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; overflow-wrap: anywhere; }
.scroll { overflow-x: auto; }
.timeline { background: var(--card); border: 1px solid var(--line); }
.timeline svg { display: block; width: 100%; min-width: 900px; height: auto; }
details { margin: .5rem 0; }
summary { cursor: pointer; }
pre.log {
  margin: .5rem 0; padding: .7rem; max-height: 32rem; overflow: auto; background: #111821;
  color: #e4e7eb; font-size: .8rem; white-space: pre-wrap; overflow-wrap: anywhere;
}
.pager { margin: .8rem 0; }
.login { max-width: 24rem; margin: 3rem auto; padding: 1.2rem 1.4rem; background: var(--card); border: 1px solid var(--line); }
.login form { display: flex; flex-direction: column; gap: .6rem; }
.login input { width: 100%; }
@media (max-width: 700px) {
  main { padding: .6rem; }
  header.top .viewer { margin-left: 0; width: 100%; justify-content: space-between; }
  table.cards, table.cards tbody, table.cards tr, table.cards td { display: block; width: 100%; }
  table.cards { border: none; background: transparent; }
  table.cards thead { display: none; }
  table.cards tr { margin: 0 0 .7rem; background: var(--card); border: 1px solid var(--line); border-radius: 6px; padding: .3rem 0; }
  table.cards td { display: flex; justify-content: space-between; gap: 1rem; border: none; padding: .2rem .7rem; text-align: right; white-space: normal; }
  table.cards td::before { content: attr(data-label); flex: none; color: var(--muted); font-weight: 600; text-align: left; }
  table.cards td:empty { display: none; }
  .timeline svg { min-width: 1100px; }
  dl.facts { grid-template-columns: 1fr; gap: 0; }
  dl.facts dd { margin-bottom: .45rem; }
  input, select { min-width: 0; width: 100%; }
  form.filters label { flex: 1 1 45%; }
}
)css";

const char kFavicon[] =
    "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 32 32\">"
    "<rect x=\"2\" y=\"2\" width=\"28\" height=\"28\" rx=\"5\" fill=\"#15263a\"/>"
    "<rect x=\"10\" y=\"10\" width=\"12\" height=\"12\" rx=\"1\" fill=\"#5fb3f6\"/>"
    "<path d=\"M13 6v4M19 6v4M13 22v4M19 22v4M6 13h4M6 19h4M22 13h4M22 19h4\" "
    "stroke=\"#5fb3f6\" stroke-width=\"2\"/></svg>\n";

}  // namespace boardlab::server::web
