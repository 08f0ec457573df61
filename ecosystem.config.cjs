// pm2 process file: `pm2 start ecosystem.config.cjs`, then `pm2 logs presence`, `pm2 stop presence`.
//
// - The program pm2 runs is node itself (this node: process.execPath), with tsx's loader and
//   src/cli.ts as arguments. Handing pm2 the .ts file instead makes it pick an interpreter by
//   extension (bun, or ts-node inside its own wrapper), which is not what is installed here.
// - pm2 has no env file setting: the command line loads .env from the working directory itself
//   (variables set here or in the shell win over the file).
// - Stopping sends SIGINT; presence stops taking updates, finishes the reply in flight (at most
//   a few seconds), flushes and exits 0. kill_timeout leaves room for that before pm2 sends SIGKILL.
// - Restarts after a crash back off exponentially so a persistent fault (a full disk, Telegram
//   unreachable) does not spin; a restart answers whatever was left unanswered, exactly once.
//   Exit 1 includes Telegram unreachable at start (after TELEGRAM_CONNECT_TIMEOUT_MS): restarted.
//   Exit 2 is a configuration mistake (a missing setting, a token Telegram rejects, an API key
//   Anthropic rejects): restarting cannot fix it, so pm2 leaves the process stopped until the
//   person fixes .env.
const fs = require("node:fs");
const path = require("node:path");

const logDir = path.join(__dirname, "logs");
fs.mkdirSync(logDir, { recursive: true, mode: 0o700 });

module.exports = {
  apps: [
    {
      name: "presence",
      cwd: __dirname,
      script: process.execPath,
      args: ["--import", "tsx", "src/cli.ts", "start"],
      interpreter: "none",
      exec_mode: "fork",
      instances: 1,
      autorestart: true,
      exp_backoff_restart_delay: 1000,
      stop_exit_codes: [2],
      max_memory_restart: "400M",
      kill_timeout: 10000,
      shutdown_with_message: false,
      out_file: path.join(logDir, "presence.out.log"),
      error_file: path.join(logDir, "presence.err.log"),
      merge_logs: true,
      time: true,
      env: {
        NODE_ENV: "production",
      },
    },
  ],
};
