-- wrk script: POST the pre-minted webhook bodies in turn; each wrk thread starts at its own offset.
local threads = 0
function setup(thread)
  thread:set("offset", threads)
  threads = threads + 1
end
local bodies = {}
local counter = 0
function init(args)
  for line in io.lines(args[1]) do bodies[#bodies + 1] = line end
  counter = (offset or 0) * 100003
end
function request()
  counter = counter + 1
  return wrk.format("POST", "/notifications", {["Content-Type"] = "application/json"}, bodies[(counter % #bodies) + 1])
end
