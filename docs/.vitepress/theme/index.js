// The site's theme: VitePress's default theme without its bundled web font
// (system fonts only, see style.css) plus the site's own components, which
// every chapter may use by name, e.g. <QpExplorer />, <QpAttrTable />,
// <SiteDiagram name="..." />, <TraceViewer src="/traces/x.json" />.
import DefaultTheme from 'vitepress/theme-without-fonts';
import QpExplorer from './components/QpExplorer.vue';
import QpAttrTable from './components/QpAttrTable.vue';
import SiteDiagram from './components/SiteDiagram.vue';
import TraceViewer from './components/TraceViewer.vue';
import './style.css';

export default {
  extends: DefaultTheme,
  enhanceApp({ app }) {
    app.component('QpExplorer', QpExplorer);
    app.component('QpAttrTable', QpAttrTable);
    app.component('SiteDiagram', SiteDiagram);
    app.component('TraceViewer', TraceViewer);
  },
};
