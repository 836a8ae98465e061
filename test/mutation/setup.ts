import fc from "fast-check"

// One seed for every property under mutation testing: a mutant is killed (or not) the same way on every run.
fc.configureGlobal({ seed: Number(process.env.MUTATION_SEED ?? 20_261_128) })
