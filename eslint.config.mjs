// `npm run lint` checks and `npm run format` fixes src/, test/ and scripts/: typescript-eslint's recommended rules, and the
// formatting of dprint's TypeScript plugin (the wasm from the @dprint/typescript package, run in process by @effect/eslint-plugin's
// `@effect/dprint` rule). The dprint options follow the code as written: no semicolons, double quotes, 2-space indent, no trailing
// commas, long lines, import order and operator placement left as they are.
import js from "@eslint/js"
import effect from "@effect/eslint-plugin"
import { defineConfig } from "eslint/config"
import tseslint from "typescript-eslint"

export default defineConfig(
  {
    files: ["src/**/*.ts", "test/**/*.ts", "scripts/**/*.ts"],
    extends: [js.configs.recommended, tseslint.configs.recommended, effect.configs.dprint],
    linterOptions: { reportUnusedDisableDirectives: "error" },
    rules: {
      "@effect/dprint": ["error", {
        config: {
          lineWidth: 180,
          indentWidth: 2,
          semiColons: "asi",
          quoteStyle: "alwaysDouble",
          trailingCommas: "never",
          operatorPosition: "maintain",
          "arrowFunction.useParentheses": "maintain",
          preferHanging: true,
          "importDeclaration.preferHanging": false,
          "exportDeclaration.preferHanging": false,
          "module.sortImportDeclarations": "maintain",
          "module.sortExportDeclarations": "maintain",
          "importDeclaration.sortNamedImports": "maintain",
          "exportDeclaration.sortNamedExports": "maintain"
        }
      }],
      // `Data.TaggedError("X")<{}>` is Effect's way to declare an error without fields.
      "@typescript-eslint/no-empty-object-type": ["error", { allowObjectTypes: "always" }],
      // A leading underscore marks a deliberately unused binding: a parameter a callback signature requires, or a field
      // dropped from an object by rest destructuring.
      "@typescript-eslint/no-unused-vars": ["error", {
        argsIgnorePattern: "^_",
        varsIgnorePattern: "^_",
        caughtErrorsIgnorePattern: "^_",
        destructuredArrayIgnorePattern: "^_",
        ignoreRestSiblings: true
      }]
    }
  },
  {
    // `any` stays forbidden in the service's code; tests and scripts may use it on parsed JSON and library internals.
    files: ["test/**/*.ts", "scripts/**/*.ts"],
    rules: { "@typescript-eslint/no-explicit-any": "off" }
  },
  {
    // Untyped JSON on purpose: the OpenAPI document as Effect's OpenApi.Transform hands it over
    // (`Record<string, any>`) and XState's machine config walked as data. The browser scripts are
    // typed against the API's schemas (type-only imports), like the rest of the service.
    files: ["src/http/OpenApiDocs.ts", "src/lifecycle/StatechartExport.ts"],
    rules: { "@typescript-eslint/no-explicit-any": "off" }
  }
)
