// Every test file (jest.config.js `setupFiles`): the suite runs two files at once (`maxWorkers`), so a
// file running a `llama:` model shares the 2 cores with another file, and llama.cpp's threads spin while
// they wait for each other: two threads beside other work slow each other down many times
// (models/llama/llama.ts `llamaThreadsFromEnv`). One thread per model, unless the caller set a count;
// child processes (the CLI tests) inherit it.
process.env.EXTAGENTS_LLAMA_THREADS ??= '1';
