// The site's theme: VitePress's default theme without its bundled web font
// (system fonts only, see style.css) plus the site's own components, which
// every chapter may use by name, e.g. <CloneCommand />, <DownloadSource />, <QpExplorer />,
// <QpAttrTable />, <SiteDiagram name="..." />, <TraceViewer src="/traces/x.json" />,
// <RateTimeline :flows="runs.dcqcn" />.
import DefaultTheme from 'vitepress/theme-without-fonts';
import CloneCommand from './components/CloneCommand.vue';
import CourseMap from './components/CourseMap.vue';
import DownloadSource from './components/DownloadSource.vue';
import QpExplorer from './components/QpExplorer.vue';
import QpAttrTable from './components/QpAttrTable.vue';
import RateTimeline from './components/RateTimeline.vue';
import SiteDiagram from './components/SiteDiagram.vue';
import TraceViewer from './components/TraceViewer.vue';
import { installScrollCues } from './scroll-cues.js';
import './style.css';

export default {
  extends: DefaultTheme,
  enhanceApp({ app }) {
    installScrollCues();
    app.component('CloneCommand', CloneCommand);
    app.component('CourseMap', CourseMap);
    app.component('DownloadSource', DownloadSource);
    app.component('QpExplorer', QpExplorer);
    app.component('QpAttrTable', QpAttrTable);
    app.component('RateTimeline', RateTimeline);
    app.component('SiteDiagram', SiteDiagram);
    app.component('TraceViewer', TraceViewer);
  },
};
