// Builds the package into dist/ (run by `npm run build` and by `prepack`, so `npm pack` ships a fresh build):
// - index.js / effect.js (ES modules) and index.cjs / effect.cjs (CommonJS), bundled by esbuild: the
//   client with its HMAC inlined (no runtime dependency); the Effect entry with the merchant API's
//   contract (../contract) inlined and `effect` left to the peer dependency;
// - declarations by the TypeScript compiler: index.d.ts / effect.d.ts beside the ES modules and
//   index.d.cts / effect.d.cts beside the CommonJS, each tree importing only its own kind, and the
//   contract's under dist/contract/.
// esbuild and typescript come from the repository's devDependencies (Node finds them in ../node_modules).
// Plain JavaScript so that any Node that runs npm can run it.
import { build } from "esbuild"
import { mkdirSync, rmSync, writeFileSync } from "node:fs"
import { dirname, join, relative } from "node:path"
import { fileURLToPath } from "node:url"
import ts from "typescript"

const SDK = dirname(fileURLToPath(import.meta.url))
const ROOT = join(SDK, "..")
const SOURCE = join(SDK, "src")
const DIST = join(SDK, "dist")
const ENTRIES = ["index", "effect"]

/** ES2022 runs on Node 18 and every current browser and edge runtime. */
const bundle = (format, extension) =>
  build({
    absWorkingDir: SOURCE,
    entryPoints: ENTRIES.map((entry) => join(SOURCE, `${entry}.ts`)),
    outdir: DIST,
    outExtension: { ".js": extension },
    bundle: true,
    format,
    platform: "neutral",
    mainFields: ["module", "main"],
    target: "es2022",
    external: ["effect", "effect/*"],
    legalComments: "none",
    logLevel: "warning"
  })

/** Where a declaration emitted under the repository root goes in dist/: the SDK's at the top, the contract's in contract/. */
const outputPath = (emitted) => {
  const path = relative(ROOT, emitted)
  if (path.startsWith("sdk/src/")) return join(DIST, path.slice("sdk/src/".length))
  if (path.startsWith("contract/")) return join(DIST, path)
  throw new Error(`unexpected declaration ${path}: the SDK may import only sdk/ and contract/`)
}

/** Relative specifiers as the output tree has them: `.ts` becomes `.js` (or `.cjs`), and ../../contract/ sits at ./contract/. */
const respecify = (text, fromSdk, extension) =>
  text.replace(/(from\s+|import\()(["'])(\.{1,2}\/[^"']+)\.ts\2/g, (_match, lead, quote, path) => {
    const moved = fromSdk ? path.replace(/^\.\.\/\.\.\/contract\//, "./contract/") : path
    return `${lead}${quote}${moved}${extension}${quote}`
  })

const declarations = () => {
  const options = {
    declaration: true,
    emitDeclarationOnly: true,
    rootDir: ROOT,
    outDir: ROOT,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    lib: ["lib.es2022.d.ts", "lib.dom.d.ts"],
    types: [],
    strict: true,
    allowImportingTsExtensions: true,
    skipLibCheck: true
  }
  const program = ts.createProgram(ENTRIES.map((entry) => join(SOURCE, `${entry}.ts`)), options)
  const problems = ts.getPreEmitDiagnostics(program)
  const result = program.emit(undefined, (emitted, text) => {
    const target = outputPath(emitted)
    const fromSdk = !relative(DIST, target).startsWith("contract/")
    mkdirSync(dirname(target), { recursive: true })
    writeFileSync(target, respecify(text, fromSdk, ".js"))
    writeFileSync(target.replace(/\.d\.ts$/, ".d.cts"), respecify(text, fromSdk, ".cjs"))
  })
  const all = [...problems, ...result.diagnostics]
  if (all.length > 0) {
    throw new Error(ts.formatDiagnostics(all, { getCanonicalFileName: (name) => name, getCurrentDirectory: () => ROOT, getNewLine: () => "\n" }))
  }
}

rmSync(DIST, { recursive: true, force: true })
await Promise.all([bundle("esm", ".js"), bundle("cjs", ".cjs")])
declarations()
console.log(`built ${relative(ROOT, DIST)}/: ${ENTRIES.map((entry) => `${entry}.{js,cjs,d.ts,d.cts}`).join(", ")}`)
