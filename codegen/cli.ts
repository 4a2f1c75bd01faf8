console.log("codegen placeholder")
