// Two builds, as the platform's template names them: `draw` (the web app, dist/web) and
// `node` (the backend, dist/node), each bundling the runtime, the core library and the
// project's bricks. A small configuration of this repository's own, not the template's.
const path = require('path')
const Copy = require('copy-webpack-plugin')
const { IgnorePlugin } = require('webpack')

const draw = path.resolve(__dirname, 'node_modules/@olympeio/draw')
// development, as the template builds by default: a production build's minification takes minutes
const common = { mode: 'development', performance: { hints: false }, devtool: false }

module.exports = [
  {
    ...common,
    name: 'draw',
    entry: './src/main.js',
    resolve: { alias: { olympe: draw } },
    output: { filename: 'main.js', path: path.resolve(__dirname, 'dist/web'), globalObject: 'this', clean: true },
    plugins: [
      new Copy({
        patterns: [
          { from: 'res/index.html' },
          { from: 'res/oConfig.json' },
          ...['images', 'fonts', 'css', 'version.json'].map((p) => ({ from: path.join(draw, p), to: p }))
        ]
      })
    ]
  },
  {
    ...common,
    name: 'node',
    target: 'node',
    entry: './src/main-node.js',
    resolve: { alias: { olympe: path.resolve(__dirname, 'node_modules/@olympeio/runtime-node') } },
    output: { filename: 'main.js', path: path.resolve(__dirname, 'dist/node'), globalObject: 'this', clean: true },
    plugins: [
      new Copy({ patterns: [{ from: 'res/oConfigNode.json', to: 'oConfig.json' }, { from: path.join(draw, 'version.json') }] }),
      // database drivers the runtime can load but this project does not use
      new IgnorePlugin({ resourceRegExp: /^(mssql.*|mariasql|.oracle|oracledb|mysql|mysql2|tedious|sqlite3|better-sqlite3|pg-query-stream|pg-native|node-pre-gyp)$/ })
    ]
  }
]
