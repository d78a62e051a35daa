{
  "targets": [
    {
      "target_name": "thread_clock",
      "sources": ["native/thread_clock.c"],
      "cflags": ["-O2"]
    }
  ]
}
